package io.ferrite.log;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;
import org.agrona.concurrent.EpochClock;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;

/**
 * Kafka's checks of a batch about to be appended to one log (its LogValidator's part that applies
 * to magic v2 without recompression): the frame and CRC, the record count, control and
 * transactional flags, record offsets and CreateTime timestamps against
 * {@code message.timestamp.before/after.max.ms}; and the lighter checks of a batch the process
 * built itself in a {@link BatchClaim}. Failures go into the {@link AppendResult} with Kafka's
 * messages. The log's writer thread only; allocates nothing but on errors.
 */
final class BatchValidator
{
    private final String log;
    private final EpochClock clock;
    private final Codecs codecs = new Codecs();
    private RecordReader records;
    private int recordsLimit;
    /** The latest wall-clock reading (the trusted timestamp check relies on the clock being no earlier). */
    private long latestClockReading;

    BatchValidator(final String log, final EpochClock clock, final int maxDecompressedMessageBytes)
    {
        this.log = log;
        this.clock = clock;
        this.records = new RecordReader(codecs, maxDecompressedMessageBytes);
        this.recordsLimit = maxDecompressedMessageBytes;
        this.latestClockReading = clock.time();
    }

    /**
     * A claimed batch carries {@link BatchClaim#UNCOMMITTED} as its base offset until the commit
     * writes its own: recovery, which takes a batch only at the offset it expects (never negative),
     * then cannot keep bytes that were built and never committed, whatever a crash or power loss
     * leaves in the file.
     */
    static boolean checkUncommitted(final RecordBatch batch, final AppendResult result)
    {
        if (batch.baseOffset() != BatchClaim.UNCOMMITTED)
        {
            result.fail(AppendResult.INVALID_RECORD, LogMessages.notUncommitted(batch.baseOffset()));
            return false;
        }
        return true;
    }

    /** Kafka's message for a batch over {@code max.message.bytes} (RECORD_TOO_LARGE). */
    String tooLarge(final int length, final LogConfig cfg)
    {
        return "The record batch size in the append to " + log + " is " + length +
            " bytes which exceeds the maximum configured value of " + cfg.maxMessageBytes + ".";
    }


    /**
     * The wall clock, remembered as the latest reading (which the trusted timestamp check relies on):
     * the last one rather than the highest, so a clock that jumped ahead and was set back is believed
     * again at the next reading.
     */
    long readClock()
    {
        final long now = clock.time();
        latestClockReading = now;
        return now;
    }

    /**
     * The timestamp window for a batch of this process's own: proven by its header when it can be
     * (see {@link PartitionLog#commit}), else every record checked as {@link PartitionLog#append} checks them.
     */
    boolean checkTrustedTimestamps(final RecordBatch batch, final LogConfig cfg, final AppendResult result)
    {
        if (cfg.logAppendTime)
        {
            return true;
        }
        if (cfg.timestampBeforeMaxMs == Long.MAX_VALUE && (batch.attributes() & COMPRESSION_MASK) == 0)
        {
            final long max = batch.maxTimestamp();
            final long latest = latestClockReading;
            if (max <= latest || max - latest <= cfg.timestampAfterMaxMs)
            {
                return true; // no record is later than the max, and the clock is no earlier than its latest reading
            }
        }
        return checkRecords(batch, cfg, readClock(), result);
    }

    /**
     * The batch's frame (and, unless {@code trusted}, its CRC), one batch per append, no control
     * batch, a record count that matches the last offset delta, a producer id on a transactional one.
     */
    boolean checkBatch(final RecordBatch batch, final int length, final LogConfig cfg, final boolean trusted,
        final AppendResult result)
    {
        final int check = trusted ? batch.checkFrame(length) : batch.check(length);
        if (check != RecordBatch.OK)
        {
            if (check == RecordBatch.UNSUPPORTED_MAGIC)
            {
                result.fail(AppendResult.UNSUPPORTED_MAGIC, "Produce requests are only allowed to contain record batches with magic version 2");
            }
            else
            {
                result.fail(AppendResult.CORRUPT_MESSAGE, LogMessages.corrupt(check));
            }
            return false;
        }
        if (batch.sizeInBytes() != length)
        {
            result.fail(AppendResult.INVALID_RECORD, "An append holds exactly one record batch");
            return false;
        }
        final int count = batch.recordCount();
        if (count == 0 || batch.lastOffsetDelta() != count - 1)
        {
            result.fail(AppendResult.INVALID_RECORD, LogMessages.countMismatch(count, batch.lastOffsetDelta()));
            return false;
        }
        if (batch.isControl())
        {
            // Kafka 4.4's LogValidator.validateBatch for origin CLIENT, after the count checks: INVALID_RECORD.
            // Markers come through PartitionLog.appendMarker, which builds them itself
            result.fail(AppendResult.INVALID_RECORD, LogMessages.controlFromClient(log));
            return false;
        }
        if (batch.isTransactional() && batch.producerId() == NO_PRODUCER_ID)
        {
            result.fail(AppendResult.INVALID_RECORD, "A transactional record batch must carry a producer id");
            return false;
        }
        if (cfg.maxDecompressedMessageBytes != recordsLimit)
        {
            records = new RecordReader(codecs, cfg.maxDecompressedMessageBytes);
            recordsLimit = cfg.maxDecompressedMessageBytes;
        }
        return true;
    }

    /** Kafka's per-record checks: offsets in order, and CreateTime timestamps within the configured window. */
    boolean checkRecords(final RecordBatch batch, final LogConfig cfg, final long now, final AppendResult result)
    {
        try
        {
            records.reset(batch);
            int i = 0;
            while (records.hasNext())
            {
                final Record r = records.next();
                if (r.offsetDelta() != i)
                {
                    result.recordIndex = i;
                    result.fail(AppendResult.INVALID_RECORD, LogMessages.offsetDelta(i, r.offsetDelta()));
                    return false;
                }
                if (!cfg.logAppendTime)
                {
                    final long ts = r.timestamp();
                    if (ts != NO_TIMESTAMP &&
                        ((ts < now && now - ts > cfg.timestampBeforeMaxMs) || (ts > now && ts - now > cfg.timestampAfterMaxMs)))
                    {
                        result.recordIndex = i;
                        result.fail(AppendResult.INVALID_TIMESTAMP, LogMessages.timestampOutOfRange(ts, i,
                            now - cfg.timestampBeforeMaxMs, now + cfg.timestampAfterMaxMs));
                        return false;
                    }
                }
                i++;
            }
            return true;
        }
        catch (final CorruptRecordException ex)
        {
            result.fail(AppendResult.CORRUPT_MESSAGE, ex.getMessage());
            return false;
        }
    }
}
