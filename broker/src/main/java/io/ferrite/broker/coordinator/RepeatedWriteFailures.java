package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;
import io.ferrite.log.AppendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * The log of failed coordinator writes: the first failure of a key's writes is logged, the ones in a row
 * after it only counted, and the count is logged when one of that key's writes succeeds — so a write
 * retried until a cause goes away (a Complete* record after a full disk, an expiry's tombstones at each
 * check) is one line, not one per try. Its cost on a successful write is an emptiness test. On the
 * coordinators' agent only.
 */
final class RepeatedWriteFailures
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorLog.class);
    /** Keys followed at once: past this many failing keys, a failure is logged each time rather than the map grow. */
    static final int MAX_KEYS = 1024;

    /** Failures in a row by topic and key. */
    private final Map<String, int[]> failing = new HashMap<>();

    /**
     * A write of {@code key} (a {@code keyKind}) to {@code topic} was answered {@code error} ({@code result}: the log's answer).
     *
     * @return whether it was logged
     */
    boolean written(final String topic, final String keyKind, final String key, final short error, final AppendResult result)
    {
        if (error == Errors.NONE)
        {
            if (!failing.isEmpty())
            {
                final int[] before = failing.remove(topic + '/' + key);
                if (before != null)
                {
                    LOG.info("writing {} {} to {} succeeded after {} failed writes", keyKind, key, topic, before[0]);
                    return true;
                }
            }
            return false;
        }
        final String id = topic + '/' + key;
        int[] count = failing.get(id);
        if (count == null && failing.size() < MAX_KEYS)
        {
            count = new int[1];
            failing.put(id, count);
        }
        if (count != null && count[0]++ > 0)
        {
            return false;
        }
        LOG.error("writing {} {} to {} failed: {} (its next failures in a row are counted, not logged)", keyKind, key, topic,
            result);
        return true;
    }

    /** Keys whose last write failed (tests). */
    int failingKeys()
    {
        return failing.size();
    }
}
