package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retention by time and size applies to {@code cleanup.policy=delete} only, as in Kafka: a
 * compact-only topic ({@code __consumer_offsets}, {@code __transaction_state}, a changelog) keeps its
 * segments for the cleaner — before, Ferrite deleted them by {@code retention.ms}, and a group's or a
 * transactional id's last record older than a week was gone at the next start.
 */
class CleanupPolicyRetentionTest
{
    private static final long WEEK_AND_A_DAY = 8L * 24 * 3600 * 1000;

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();

    private int deletedBy(final String policy, final String retention) throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir.resolve(policy.replace(',', '-') + retention))))
        {
            final PartitionLog log = logs.createLog("t", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600",
                LogConfig.CLEANUP_POLICY, policy, retention, "1"));
            while (log.segmentCount() < 4)
            {
                batches.records(3, log.logEndOffset(), System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            log.highWatermark(log.logEndOffset()); // the owner's: nothing above it is deleted
            return log.deleteOldSegments(System.currentTimeMillis() + WEEK_AND_A_DAY);
        }
    }

    @Test
    void retentionDeletesUnderDeleteAndCompactDeleteAndNeverUnderCompactAlone() throws Exception
    {
        for (final String retention : new String[] {"retention.ms", "retention.bytes"})
        {
            assertTrue(deletedBy("delete", retention) >= 3, retention + " under delete");
            assertTrue(deletedBy("compact,delete", retention) >= 3, retention + " under compact,delete");
            assertEquals(0, deletedBy("compact", retention), retention + " under compact alone");
        }
    }
}
