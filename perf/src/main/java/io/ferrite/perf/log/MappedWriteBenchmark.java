package io.ferrite.perf.log;

import net.openhft.chronicle.bytes.MappedBytes;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;

/**
 * The choice issue 17 asks about: does Chronicle Bytes' {@code MappedBytes} serve a segment's mapping
 * better than what the log engine uses (an Agrona {@code UnsafeBuffer} over the segment's
 * {@code MappedByteBuffer})? Both copy one message of 64 B or 1 KiB from a heap array to the next
 * position of a 64 MiB file mapping (wrapping at its end, so the pages stay resident after the first
 * pass) and read its first word back — the copy and the bounds checks a segment append pays, without
 * the log's own work (CRC, index, producer state), which is the same whichever buffer carries the bytes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g", "-Dchronicle.analytics.disable=true", "-Dchronicle.disk.monitor.disable=true",
    "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED"})
public class MappedWriteBenchmark
{
    private static final int FILE_BYTES = 64 << 20;

    @Param({"64", "1024"})
    public int messageBytes;

    private File dir;
    private byte[] message;
    private MappedByteBuffer mapping;
    private UnsafeBuffer agrona;
    private MappedBytes chronicle;
    private long agronaPosition;
    private long chroniclePosition;

    @Setup
    public void setUp() throws IOException
    {
        dir = Files.createTempDirectory("mapped-write").toFile();
        message = new byte[messageBytes];
        for (int i = 0; i < messageBytes; i++)
        {
            message[i] = (byte)i;
        }
        try (RandomAccessFile file = new RandomAccessFile(new File(dir, "agrona.log"), "rw");
            FileChannel channel = file.getChannel())
        {
            file.setLength(FILE_BYTES);
            mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES);
        }
        agrona = new UnsafeBuffer(mapping);
        // One chunk as large as the file: the comparison is the write path, not Chronicle's chunk hand-over.
        chronicle = MappedBytes.mappedBytes(new File(dir, "chronicle.log"), FILE_BYTES, 0);
    }

    @Benchmark
    public int agronaUnsafeBuffer()
    {
        if (agronaPosition + messageBytes > FILE_BYTES)
        {
            agronaPosition = 0;
        }
        final int at = (int)agronaPosition;
        agrona.putBytes(at, message, 0, messageBytes);
        agronaPosition += messageBytes;
        return agrona.getInt(at);
    }

    @Benchmark
    public int chronicleMappedBytes()
    {
        if (chroniclePosition + messageBytes > FILE_BYTES)
        {
            chroniclePosition = 0;
        }
        final long at = chroniclePosition;
        chronicle.write(at, message, 0, messageBytes);
        chroniclePosition += messageBytes;
        return chronicle.readInt(at);
    }

    @TearDown
    public void tearDown()
    {
        chronicle.releaseLast();
        IoUtil.unmap(mapping);
        IoUtil.delete(dir, true);
    }
}
