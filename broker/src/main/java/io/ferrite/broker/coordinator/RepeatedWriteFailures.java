package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;
import io.ferrite.log.AppendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The log of failed coordinator writes: the first failure of a key's writes is logged, the ones in a row
 * after it only counted, and the count is logged when one of that key's writes succeeds — so a write
 * retried until a cause goes away (a Complete* record after a full disk, an expiry's tombstones at each
 * check) is one line, not one per try. A key whose writes stop without a success (a group deleted, a
 * transaction given up) is forgotten once its last failure is {@value #FORGET_AFTER_MS} ms old, so stale
 * keys neither fill the map nor cost the successes a lookup for ever. Its cost on a successful write is an
 * emptiness test, or, while some key is failing, two hash lookups (by topic, then by key: no string is
 * built). On the coordinators' agent only.
 */
final class RepeatedWriteFailures
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorLog.class);
    /** Keys followed at once: past this many failing keys, a failure is logged each time rather than the map grow. */
    static final int MAX_KEYS = 1024;
    /**
     * A key not written for this long since its last failure is forgotten: ten minutes, over a hundred times the
     * longest retry backoff (5 s), so a key still being retried is never forgotten; a later failure is logged anew.
     */
    static final long FORGET_AFTER_MS = 600_000;

    /** A key's failures in a row, and when the last one came. */
    private static final class Run
    {
        int failures;
        long lastFailureMs;
    }

    /** Failures in a row by topic, then key. */
    private final Map<String, Map<String, Run>> failing = new HashMap<>();
    private int keys;
    private long nextSweepMs;

    /**
     * A write of {@code key} (a {@code keyKind}) to {@code topic} was answered {@code error} at {@code nowMs} (the
     * agent's monotonic time; {@code result}: the log's answer).
     *
     * @return whether it was logged
     */
    boolean written(final String topic, final String keyKind, final String key, final short error, final AppendResult result,
        final long nowMs)
    {
        if (keys > 0 && nowMs >= nextSweepMs)
        {
            forgetStale(nowMs);
        }
        final Map<String, Run> ofTopic = keys == 0 ? null : failing.get(topic);
        if (error == Errors.NONE)
        {
            final Run before = ofTopic == null ? null : ofTopic.remove(key);
            if (before == null)
            {
                return false;
            }
            keys--;
            LOG.info("writing {} {} to {} succeeded after {} failed writes", keyKind, key, topic, before.failures);
            return true;
        }
        Run run = ofTopic == null ? null : ofTopic.get(key);
        if (run == null && keys < MAX_KEYS)
        {
            run = new Run();
            failing.computeIfAbsent(topic, t -> new HashMap<>()).put(key, run);
            if (keys++ == 0)
            {
                nextSweepMs = nowMs + FORGET_AFTER_MS;
            }
        }
        if (run != null)
        {
            run.lastFailureMs = nowMs;
            if (run.failures++ > 0)
            {
                return false;
            }
        }
        LOG.error("writing {} {} to {} failed: {} (its next failures in a row are counted, not logged)", keyKind, key, topic,
            result);
        return true;
    }

    /** Forgets the keys whose last failure is {@link #FORGET_AFTER_MS} old; the next sweep a quarter of that later. */
    private void forgetStale(final long nowMs)
    {
        int forgotten = 0;
        for (final Iterator<Map<String, Run>> topics = failing.values().iterator(); topics.hasNext(); )
        {
            final Map<String, Run> ofTopic = topics.next();
            for (final Iterator<Run> runs = ofTopic.values().iterator(); runs.hasNext(); )
            {
                if (nowMs - runs.next().lastFailureMs >= FORGET_AFTER_MS)
                {
                    runs.remove();
                    forgotten++;
                }
            }
            if (ofTopic.isEmpty())
            {
                topics.remove();
            }
        }
        keys -= forgotten;
        nextSweepMs = nowMs + FORGET_AFTER_MS / 4;
        if (forgotten > 0)
        {
            LOG.info("{} coordinator keys whose writes failed and were not tried again for {} ms are no longer followed", forgotten,
                FORGET_AFTER_MS);
        }
    }

    /** Keys whose last write failed (tests). */
    int failingKeys()
    {
        return keys;
    }
}
