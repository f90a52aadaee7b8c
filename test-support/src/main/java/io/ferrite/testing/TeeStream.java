package io.ferrite.testing;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes to a stream and to a second one, e.g. {@code System.err} and a {@code ByteArrayOutputStream} a test reads the
 * broker's log lines from (slf4j-simple writes to {@code System.err}).
 */
public final class TeeStream extends OutputStream
{
    private final OutputStream a;
    private final OutputStream b;

    public TeeStream(final OutputStream a, final OutputStream b)
    {
        this.a = a;
        this.b = b;
    }

    @Override
    public synchronized void write(final int c) throws IOException
    {
        a.write(c);
        b.write(c);
    }

    @Override
    public synchronized void write(final byte[] bytes, final int off, final int len) throws IOException
    {
        a.write(bytes, off, len);
        b.write(bytes, off, len);
    }
}
