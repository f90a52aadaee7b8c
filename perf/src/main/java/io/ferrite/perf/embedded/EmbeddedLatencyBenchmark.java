package io.ferrite.perf.embedded;

import io.ferrite.log.AppendResult;
import io.ferrite.log.BatchClaim;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.LogTailer;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ferrite's embedded log against Chronicle Queue, one message of 64 B or 1 KiB at a time, paced at
 * 10 000 messages per second (the pacing, and for {@code tail} the append of the message read, run
 * in an invocation-level setup that JMH leaves out of the measurement).
 *
 * <ul>
 * <li>{@code append}: Ferrite appends one record batch holding the message (61 B batch header and
 * the record's own header around it) with {@link PartitionLog#append}; Chronicle writes the message
 * bytes as one excerpt with {@code ExcerptAppender.writeBytes}.
 * <li>{@code claim}: the in-process write in place. Ferrite claims room at the end of the log
 * ({@link PartitionLog#claim}), builds the record batch there around the message (the record's
 * timestamp read from the clock, as a producer reads it; the CRC computed once) and commits it;
 * Chronicle opens a document with {@code ExcerptAppender.writingDocument()} and writes the message
 * bytes into it. Both write into their mapped file directly.
 * <li>{@code tail}: a reader at the end of the log reads back the message just appended, into its
 * own direct buffer: Ferrite's {@link LogTailer} wraps the next batch in its segment's mapping and
 * it is copied out (no system call); Chronicle's tailer copies the excerpt from its mapping.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g", "-Dchronicle.analytics.disable=true", "-Dchronicle.disk.monitor.disable=true",
    "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED", "--add-exports", "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-opens", "jdk.compiler/com.sun.tools.javac=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED"})
public class EmbeddedLatencyBenchmark
{
    private static final long INTERVAL_NS = 100_000; // 10 000 messages per second

    public enum Engine { FERRITE, CHRONICLE }

    @Param({"FERRITE", "CHRONICLE"})
    public Engine engine;

    @Param({"64", "1024"})
    public int messageBytes;

    private Path dir;
    private long next;
    private boolean tailing;

    // Ferrite
    private LogManager manager;
    private PartitionLog log;
    private final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(4096);
    private final AppendResult result = new AppendResult();
    private final io.ferrite.wire.record.RecordBatch readBatch = new io.ferrite.wire.record.RecordBatch();
    private LogTailer logTailer;
    private final BatchClaim claim = new BatchClaim();
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private UnsafeBuffer value;
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
    private int batchLength;

    // Chronicle Queue
    private SingleChronicleQueue queue;
    private ExcerptAppender appender;
    private ExcerptTailer tailer;
    private Bytes<?> message;
    private Bytes<?> readBytes;

    @Setup(Level.Trial)
    public void setUp(final BenchmarkParams params) throws IOException
    {
        tailing = params.getBenchmark().endsWith(".tail");
        dir = Files.createTempDirectory("ferrite-embedded-bench");
        if (engine == Engine.FERRITE)
        {
            manager = LogManager.open(LogManagerConfig.of(dir));
            log = manager.createLog("bench", 0, Map.of("message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE)));
            value = new UnsafeBuffer(new byte[messageBytes]);
            batchLength = new RecordBatchBuilder().wrap(batch, 0)
                .appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, messageBytes).build();
            logTailer = new LogTailer(log, log.logEndOffset());
        }
        else
        {
            queue = SingleChronicleQueueBuilder.binary(dir).build();
            appender = queue.createAppender();
            tailer = queue.createTailer();
            message = Bytes.allocateDirect(messageBytes);
            message.write(new byte[messageBytes]);
            readBytes = Bytes.allocateElasticDirect(64 * 1024);
        }
        if (params.getBenchmark().endsWith(".claim"))
        {
            checkClaimWritesTheMessage();
        }
        next = System.nanoTime();
    }

    /** One claim, read back: the benchmark measures writes that really hold the message. */
    private void checkClaimWritesTheMessage() throws IOException
    {
        final int read;
        if (engine == Engine.FERRITE)
        {
            final LogTailer check = new LogTailer(log, log.logEndOffset());
            doClaim();
            if (!check.next(Long.MAX_VALUE, readBatch))
            {
                throw new IllegalStateException("the claimed batch is not in the log");
            }
            final io.ferrite.wire.record.RecordReader records = new io.ferrite.wire.record.RecordReader().reset(readBatch);
            read = records.next().valueLength();
        }
        else
        {
            final ExcerptTailer check = queue.createTailer().toEnd();
            doClaim();
            readBytes.clear();
            if (!check.readBytes(readBytes))
            {
                throw new IllegalStateException("the document is not in the queue");
            }
            read = (int)readBytes.readRemaining();
        }
        if (read != messageBytes)
        {
            throw new IllegalStateException("a claim wrote " + read + " bytes of a " + messageBytes + "-byte message");
        }
    }

    /** Paces both benchmarks; JMH leaves invocation-level setup out of the measurement. */
    @Setup(Level.Invocation)
    public void pace()
    {
        next += INTERVAL_NS;
        long now;
        while ((now = System.nanoTime()) < next)
        {
            Thread.onSpinWait();
        }
        if (now - next > 10 * INTERVAL_NS)
        {
            next = now;
        }
        if (tailing)
        {
            doAppend(); // the message tail reads back
        }
    }

    @Benchmark
    public long append()
    {
        return doAppend();
    }

    private long doAppend()
    {
        if (engine == Engine.FERRITE)
        {
            log.append(batch, 0, batchLength, result);
            if (result.status != AppendResult.OK)
            {
                throw new IllegalStateException(result.toString());
            }
            return result.lastOffset;
        }
        appender.writeBytes(message);
        return appender.lastIndexAppended();
    }

    @Benchmark
    public long claim()
    {
        return doClaim();
    }

    private long doClaim()
    {
        if (engine == Engine.FERRITE)
        {
            if (!log.claim(messageBytes + 128, claim, result))
            {
                throw new IllegalStateException(result.toString());
            }
            final int length = claim.wrap(builder)
                .appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, messageBytes).build();
            log.commit(claim, length, result);
            if (result.status != AppendResult.OK)
            {
                throw new IllegalStateException(result.toString());
            }
            return result.lastOffset;
        }
        try (DocumentContext document = appender.writingDocument())
        {
            document.wire().bytes().write(message);
        }
        return appender.lastIndexAppended();
    }

    @Benchmark
    public long tail() throws IOException
    {
        if (engine == Engine.FERRITE)
        {
            if (!logTailer.next(Long.MAX_VALUE, readBatch))
            {
                throw new IllegalStateException("nothing at " + logTailer.nextOffset());
            }
            readBatch.buffer().getBytes(readBatch.offset(), readBuffer, 0, readBatch.sizeInBytes());
            return readBuffer.getLong(0); // the batch's base offset
        }
        readBytes.clear();
        if (!tailer.readBytes(readBytes))
        {
            throw new IllegalStateException("nothing to read");
        }
        return readBytes.readRemaining();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
        if (queue != null)
        {
            queue.close();
            message.releaseLast();
            readBytes.releaseLast();
        }
        try (var files = Files.walk(dir))
        {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
