package io.ferrite.broker.admin;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicIds;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Start-up, with {@link TopicRegistry#load} and before the broker serves: makes the partitions'
 * files of every creation and growth the {@link CreationJournal} holds and the files do not reflect yet (a crash
 * between an answer and the files), then empties the journal.
 *
 * <p>The rule, and why it never brings a deleted topic back. The admin agent is the journal's only
 * writer and runs one command or chunk of files at a time; it empties the journal (durably) only when
 * no journaled topic is pending ({@link PendingCreations}: every record's files made), and a deletion that
 * runs while the journal is not empty appends a {@link CreationJournal.Kind#DELETE} of the topic's id,
 * fsynced, <em>before</em> it renames a single file or drops a pending topic. So a topic deleted since its creation was journaled either left the journal with the
 * records emptied before the deletion, or is voided by a DELETE that follows its CREATE. Replay
 * therefore walks the entries in order: a CREATE, GROW or CONFIG sets the wanted state of its topic id (the
 * later the entry, the newer the state), a DELETE voids everything before it of that id; what is left
 * is made: a topic absent from the files is created with its journaled id, partitions and configs;
 * one present with the same id gets the partitions it lacks (a creation cut short before any of its
 * partitions held its id loads with the journaled one, and its partitions without their id get the journaled
 * configs, durably before the id: {@link TopicRegistry#load(Map, Map)}); a whole topic's growth (its CREATE emptied when it was
 * made whole) is a GROW alone: its partitions made load with their id, one cut short inside a slice (a folder whose
 * overrides are not yet durable, no id) gets the overrides of the last one made and the topic's id the same way, and
 * the rest is added; a topic of the same name with another id is
 * left as the files have it (not the journal's: one made without the journal, logged). Making is idempotent: a replay cut
 * short by another crash is replayed again, as the journal is emptied only after it succeeded.
 */
public final class CreationReplay
{
    private static final Logger LOG = LoggerFactory.getLogger(CreationReplay.class);

    private CreationReplay()
    {
    }

    /**
     * The single-node broker's start: opens the journal in the first of {@code logDirs}, loads {@code topics}
     * from the files — a topic cut short before any of its partitions held its id takes the id the journal answered —
     * and replays the journal into them; the journal, empty now, is the admin agent's from here on. Without
     * {@code journaled} (cluster mode, whose metadata log is the record) the topics are loaded and null comes back.
     */
    public static CreationJournal open(final java.util.List<java.nio.file.Path> logDirs, final TopicRegistry topics,
        final boolean journaled) throws IOException
    {
        final java.nio.file.Path dir = logDirs.get(0);
        if (!journaled)
        {
            final java.nio.file.Path file = dir.resolve(CreationJournal.FILE_NAME);
            if (java.nio.file.Files.exists(file) && java.nio.file.Files.size(file) > 0)
            {
                LOG.warn("{} holds creations of a single-node start: ignored in cluster mode", file);
            }
            topics.load();
            return null;
        }
        final CreationJournal journal = CreationJournal.open(dir);
        journal.logDirs(logDirs);
        try
        {
            final Map<String, long[]> answered = new java.util.HashMap<>();
            final Map<String, Map<String, String>> configs = new java.util.HashMap<>();
            for (final CreationJournal.Entry e : wanted(journal.entries()).values())
            {
                // a GROW alone too: a whole topic's growth (its CREATE emptied earlier), whose partition cut short at its
                // files' creation (a folder, its overrides not yet durable) needs the topic's overrides as a creation's does;
                // a CONFIG after either is merged into it (wanted), as are later GROWs
                if (e.kind() == CreationJournal.Kind.CREATE || e.kind() == CreationJournal.Kind.GROW)
                {
                    answered.put(e.name(), new long[] {e.idMsb(), e.idLsb()}); // the later creation of a name wins
                    configs.put(e.name(), e.configs());
                }
            }
            topics.load(answered, configs); // a creation or growth cut short gets the answered configs before its ids
            replay(journal, topics);
            return journal;
        }
        catch (final IOException | RuntimeException ex)
        {
            journal.close();
            throw ex;
        }
    }

    /** Replays {@code journal} into {@code topics} (on the registry's writer, before serving) and empties it; returns topics made or grown. */
    public static int replay(final CreationJournal journal, final TopicRegistry topics) throws IOException
    {
        final Map<String, CreationJournal.Entry> wanted = wanted(journal.entries());
        final java.util.Set<String> reconfigured = reconfigured(journal.entries());
        int made = 0;
        for (final CreationJournal.Entry e : wanted.values())
        {
            try
            {
                made += make(e, topics, reconfigured.contains(TopicIds.encode(e.idMsb(), e.idLsb())));
            }
            catch (final IOException | RuntimeException ex)
            {
                // the broker starts without its files; the record stays for the next start, the topic listed meanwhile
                // with the partitions not made offline (its name taken)
                journal.unmade();
                LOG.error("making topic {}, answered before the last stop, failed: kept in {} for the next start", e.name(),
                    journal.file(), ex);
                offline(e, topics);
            }
        }
        journal.clear();
        return made;
    }

    /**
     * Journaled topic {@code e} whose files failed at the start: published with the partitions not made offline
     * ({@link OfflineTopics}), or, when even that fails, an absent one's name kept taken. A GROW alone of a topic absent
     * (deleted) publishes nothing.
     */
    private static void offline(final CreationJournal.Entry e, final TopicRegistry topics)
    {
        final boolean absent = topics.topic(e.name()) == null;
        if ((!absent || e.kind() == CreationJournal.Kind.CREATE)
            && !OfflineTopics.publish(topics, e.name(), new long[] {e.idMsb(), e.idLsb()}, e.partitions(), e.configs()) && absent)
        {
            topics.creating(e.name(), new long[] {e.idMsb(), e.idLsb()}, e.partitions());
        }
    }

    /**
     * {@code reconfigured}: its configs were changed while it was made in slices (a CONFIG after its creation): a topic
     * still partly made gets them on every partition, as a crash may have cut that change short.
     */
    private static int make(final CreationJournal.Entry e, final TopicRegistry topics, final boolean reconfigured) throws IOException
    {
        Topic present = topics.topic(e.name());
        if (present == null)
        {
            if (e.kind() != CreationJournal.Kind.CREATE)
            {
                return 0; // a GROW alone: its topic's CREATE was emptied from the journal earlier, so a topic absent now was deleted
            }
            LOG.info("making topic {} ({} partitions), answered before the last stop and not in the files", e.name(), e.partitions());
            topics.create(e.name(), e.partitions(), e.configs(), new long[] {e.idMsb(), e.idLsb()});
            return 1;
        }
        if (present.idMostSignificantBits != e.idMsb() || present.idLeastSignificantBits != e.idLsb())
        {
            LOG.warn("topic {} in the files has another id than the creation journal's {}: left as the files have it", e.name(),
                TopicIds.encode(e.idMsb(), e.idLsb()));
            return 0;
        }
        if (present.partitions.length < e.partitions())
        {
            if (reconfigured)
            {
                LOG.info("topic {} gets the config overrides {} changed to before the last stop", e.name(), e.configs());
                present = topics.updateConfig(present, e.configs());
            }
            LOG.info("adding partitions to topic {} ({} -> {}), answered before the last stop", e.name(), present.partitions.length,
                e.partitions());
            topics.addPartitions(present, e.partitions());
            return 1;
        }
        return 0;
    }

    /** The ids whose configs a CONFIG changed after their last CREATE (and no DELETE since). */
    private static java.util.Set<String> reconfigured(final List<CreationJournal.Entry> entries)
    {
        final java.util.Set<String> ids = new java.util.HashSet<>();
        for (final CreationJournal.Entry e : entries)
        {
            final String id = TopicIds.encode(e.idMsb(), e.idLsb());
            if (e.kind() == CreationJournal.Kind.CONFIG)
            {
                ids.add(id);
            }
            else if (e.kind() != CreationJournal.Kind.GROW)
            {
                ids.remove(id);
            }
        }
        return ids;
    }

    /** The wanted state of each topic id the entries leave (in order of their last entry), keyed by id. */
    static Map<String, CreationJournal.Entry> wanted(final List<CreationJournal.Entry> entries)
    {
        final Map<String, CreationJournal.Entry> byId = new LinkedHashMap<>();
        for (final CreationJournal.Entry e : entries)
        {
            final String id = TopicIds.encode(e.idMsb(), e.idLsb());
            switch (e.kind())
            {
                case DELETE -> byId.remove(id);
                case CREATE -> byId.put(id, e);
                case GROW ->
                {
                    final CreationJournal.Entry before = byId.get(id);
                    // a GROW after its CREATE: still a creation, now of more partitions
                    byId.put(id, before == null ? e : new CreationJournal.Entry(before.kind(), before.name(), before.idMsb(),
                        before.idLsb(), Math.max(before.partitions(), e.partitions()), before.configs()));
                }
                case CONFIG ->
                {
                    final CreationJournal.Entry before = byId.get(id);
                    // a CONFIG after its CREATE: still a creation, now with the configs changed to
                    byId.put(id, before == null ? e : new CreationJournal.Entry(before.kind(), before.name(), before.idMsb(),
                        before.idLsb(), Math.max(before.partitions(), e.partitions()), e.configs()));
                }
                default -> throw new IllegalStateException("unknown entry kind " + e.kind());
            }
        }
        return byId;
    }
}
