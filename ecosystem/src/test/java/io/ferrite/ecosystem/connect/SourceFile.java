package io.ferrite.ecosystem.connect;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The file a FileStreamSource connector reads, appended to on a thread of its own at a steady pace: line
 * {@code n} is {@code line-<n>} (zero-padded), each written whole, newline included, in one write — so the
 * connector never sees half a line — while workers are killed and restarted.
 */
final class SourceFile implements AutoCloseable
{
    /** Between lines: about 100 a second, so that every kill falls among lines in flight. */
    private static final long PAUSE_MS = 10;

    private final Path path;
    private final OutputStream out;
    private final AtomicInteger written = new AtomicInteger();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean stopping;

    SourceFile(final Path path) throws IOException
    {
        this.path = path;
        this.out = Files.newOutputStream(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        this.thread = new Thread(this::append, "source-file-appender");
        thread.start();
    }

    static String line(final int n)
    {
        return String.format("line-%06d", n);
    }

    private void append()
    {
        try
        {
            while (!stopping)
            {
                out.write((line(written.get()) + "\n").getBytes(StandardCharsets.UTF_8));
                written.incrementAndGet();
                Thread.sleep(PAUSE_MS); // a pace, not a wait for anything
            }
        }
        catch (final IOException ex)
        {
            failure.set(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    Path path()
    {
        return path;
    }

    int written()
    {
        return written.get();
    }

    /** Stops appending; returns every line written, in order. */
    List<String> stop() throws Exception
    {
        close();
        if (failure.get() != null)
        {
            throw failure.get();
        }
        final List<String> lines = new ArrayList<>();
        for (int n = 0; n < written.get(); n++)
        {
            lines.add(line(n));
        }
        return lines;
    }

    @Override
    public void close() throws Exception
    {
        stopping = true;
        thread.join(TimeUnit.SECONDS.toMillis(10));
        out.close();
    }
}
