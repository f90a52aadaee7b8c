package io.ferrite.broker.admin;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The creation journal kept from growing for ever while topics stay pending ({@link PendingCreations}): once it holds at
 * least {@link #REWRITE_BYTES} and twice what its last rewrite left, it is rewritten to the pending topics' records alone
 * ({@link CreationJournal#rewrite}: a new file fsynced, renamed over the old one, the directory fsynced), so a steady
 * stream of creations that never lets the queue drain costs a journal of its pending topics, amortized O(1) a record.
 * Not while a topic's files failed (its record stays for the next start, and so does every other). Once nothing is
 * pending the journal is emptied ({@link #empty}).
 *
 * <p>Threading: the admin agent only, but the tests' setter of the size ({@link #rewriteBytes(long)}).
 */
final class JournalRewrites
{
    /** The log of {@link PendingCreations}, as before the split: a rewrite is logged under the same name. */
    private static final Logger LOG = LoggerFactory.getLogger(PendingCreations.class);
    /** The journal's size from which it is rewritten to the pending topics' records while some are pending. */
    static final long REWRITE_BYTES = 1 << 20;
    /**
     * A JVM system property for tests that run the server in a child JVM (a crash test): the journal size from which it
     * is rewritten instead of {@link #REWRITE_BYTES}. Internal: Kafka has no such setting, so no broker property.
     */
    static final String REWRITE_BYTES_PROPERTY = "ferrite.internal.creation.journal.rewrite.bytes";

    private final CreationJournal journal;
    /** The journal's size from which a rewrite is considered ({@link #REWRITE_BYTES}; tests set another). */
    private volatile long rewriteBytes = Long.getLong(REWRITE_BYTES_PROPERTY, REWRITE_BYTES);
    /** Rewrites of the journal (read by tests). */
    private int rewrites;

    JournalRewrites(final CreationJournal journal)
    {
        this.journal = journal;
    }

    /** The journal size from which it is rewritten while topics are pending, for tests. */
    void rewriteBytes(final long bytes)
    {
        rewriteBytes = bytes;
    }

    /** The journal rewrites so far (agent only; for tests). */
    int rewrites()
    {
        return rewrites;
    }

    /**
     * Nothing pending: the journal emptied (nothing while a record's files failed: {@link CreationJournal#clear}). A
     * failure keeps every record (replayed, idempotently, at the next start) and marks the journal unmade, so that it is
     * not emptied or rewritten before then.
     */
    void empty()
    {
        try
        {
            journal.clear();
        }
        catch (final IOException ex)
        {
            journal.unmade(); // a deletion must still journal itself: the records stay
            LOG.error("emptying the creation journal {} failed: its records are replayed (idempotently) at the next start",
                journal.file(), ex);
        }
    }

    /**
     * With topics {@code pending} (by name, not empty): the journal rewritten to their records when it is large enough
     * ({@link #rewriteBytes}), at least twice what its last rewrite left, and no topic's files failed.
     */
    void rewriteIfDue(final Map<String, PendingTopic> pending)
    {
        if (journal.size() >= rewriteBytes && journal.size() >= 2 * journal.rewrittenSize() && !journal.isUnmade())
        {
            rewrite(pending);
        }
    }

    /**
     * The journal rewritten to the records of the topics still pending (with the ids they were answered): a creation's
     * CREATE, a whole topic's growth's GROW, each with the later GROWs and CONFIGs of its id merged in
     * ({@link CreationReplay#wanted}).
     */
    private void rewrite(final Map<String, PendingTopic> pending)
    {
        final List<CreationJournal.Entry> kept = new ArrayList<>(pending.size());
        for (final CreationJournal.Entry e : CreationReplay.wanted(journal.entries()).values())
        {
            final PendingTopic p = pending.get(e.name());
            if (p != null && p.id[0] == e.idMsb() && p.id[1] == e.idLsb())
            {
                kept.add(e);
            }
        }
        if (kept.size() != pending.size()) // a pending topic without its record: a rewrite would drop its only one
        {
            LOG.error("creation journal {} not rewritten: {} records found for {} pending topics", journal.file(), kept.size(),
                pending.size());
            return;
        }
        final long before = journal.size();
        try
        {
            final boolean durable = journal.rewrite(kept);
            rewrites++;
            LOG.info("creation journal {} rewritten with {} topics pending: {} -> {} bytes{}", journal.file(), kept.size(), before,
                journal.size(), durable ? "" : " (its directory not fsynced yet: the next append or emptying does it)");
        }
        catch (final IOException ex)
        {
            LOG.warn("rewriting the creation journal {} failed before its rename: it keeps every record (replayed idempotently)",
                journal.file(), ex);
        }
    }
}
