package io.ferrite.log;

import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The process the crash test kills: appends numbered batches to one partition in fsync durability
 * for as long as it lives, and prints {@code ACK <k>} once an fsync covers batch k. Batch k's bytes
 * are a pure function of k, so the test can check them after recovery; they come from one
 * idempotent producer, so a restarted child also checks the recovered producer state.
 *
 * <p>{@code CrashChild <log dir> <MAPPED|CHANNEL> [claim]}: with {@code claim}, each batch is built
 * in a {@link BatchClaim} (in the segment's mapping with MAPPED) and committed instead of appended.
 */
public final class CrashChild
{
    static final String TOPIC = "crash";
    static final Map<String, String> CONFIG = Map.of(
        LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(48 * 1024),
        LogConfig.INDEX_INTERVAL_BYTES, "1024",
        LogConfig.DURABILITY, LogConfig.DURABILITY_FSYNC,
        LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));

    private CrashChild()
    {
    }

    /** Records in batch k. */
    static int records(final long k)
    {
        return 1 + (int)(k % 4);
    }

    /** The base offset of batch k: batches are appended in order from offset 0. */
    static long baseOffset(final long k)
    {
        final long full = k / 4;
        long offset = full * 10; // 1 + 2 + 3 + 4 per group of four
        for (long j = full * 4; j < k; j++)
        {
            offset += records(j);
        }
        return offset;
    }

    /** The batch k as a client sends it (before the log patches its base offset and leader epoch). */
    static int build(final long k, final RecordBatchBuilder builder, final MutableDirectBuffer out)
    {
        return build(k, builder.wrap(out, 0));
    }

    /** Batch k, built by a builder already started on its buffer (by a claim, for one). */
    static int build(final long k, final RecordBatchBuilder started)
    {
        final RecordBatchBuilder builder = started;
        // one idempotent producer whose sequences follow the offsets: a restarted child must find
        // the producer state recovered (snapshot + replay) for its next batch to be accepted
        builder.producer(1000, (short)0, (int)baseOffset(k));
        for (int i = 0; i < records(k); i++)
        {
            final byte[] value = new byte[(int)(50 + (k * 37 + i * 101) % 700)];
            for (int j = 0; j < value.length; j++)
            {
                value[j] = (byte)(k + i + j);
            }
            builder.appendRecord(1_700_000_000_000L + k, ("k" + k + "-" + i).getBytes(StandardCharsets.UTF_8), value);
        }
        return builder.build();
    }

    public static void main(final String[] args) throws Exception
    {
        final ConcurrentLinkedQueue<long[]> unacked = new ConcurrentLinkedQueue<>();
        final DurabilityListener ack = (log, durable) ->
        {
            long[] head;
            while ((head = unacked.peek()) != null && head[1] < durable)
            {
                unacked.poll();
                System.out.println("ACK " + head[0]);
            }
            System.out.flush();
        };
        final LogManagerConfig config = LogManagerConfig.of(Path.of(args[0])).withWriteStrategy(WriteStrategy.valueOf(args[1]))
            .withDurabilityListener(ack);
        final LogManager manager = LogManager.open(config);
        PartitionLog log = manager.log(TOPIC, 0);
        if (log == null)
        {
            log = manager.createLog(TOPIC, 0, CONFIG);
        }
        long k = 0;
        while (baseOffset(k) < log.logEndOffset())
        {
            k++;
        }
        if (baseOffset(k) != log.logEndOffset())
        {
            throw new IllegalStateException("log end " + log.logEndOffset() + " is not a batch boundary");
        }
        System.out.println("READY " + k);
        System.out.flush();
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(8192);
        final AppendResult result = new AppendResult();
        final boolean claims = args.length > 2 && "claim".equals(args[2]);
        final BatchClaim claim = new BatchClaim();
        while (true)
        {
            if (claims)
            {
                if (!log.claim(8192, claim, result))
                {
                    throw new IllegalStateException("claim for batch " + k + ": " + result);
                }
                log.commit(claim, build(k, claim.wrap(builder)), result);
            }
            else
            {
                log.append(buffer, 0, build(k, builder, buffer), result);
            }
            if (result.status != AppendResult.OK || result.firstOffset != baseOffset(k))
            {
                throw new IllegalStateException("append of batch " + k + ": " + result);
            }
            unacked.add(new long[] {k, result.lastOffset});
            k++;
            if (unacked.size() > 64)
            {
                log.awaitDurable(result.lastOffset + 1, 10_000); // bound the lag behind the fsyncs
            }
        }
    }
}
