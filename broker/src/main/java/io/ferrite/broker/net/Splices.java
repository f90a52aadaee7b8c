package io.ferrite.broker.net;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;

/**
 * The file regions spliced into a {@link Connection}'s response (a fetch's records): each is {@code length} bytes of a
 * file at a position, sent before an output position with {@code transferTo}, or read into the TLS engine a record at
 * a time on a TLS connection. One per connection, made with it: its arrays keep their size for the next responses
 * (they double when a response has more regions than ever before), so nothing is allocated per response.
 */
final class Splices
{
    private static final int INITIAL = 16;

    private int count;
    /** The region being sent, and how much of it is sent. */
    private int index;
    private long sent;
    private int[] at = new int[INITIAL];
    private FileChannel[] channel = new FileChannel[INITIAL];
    private long[] filePosition = new long[INITIAL];
    private int[] length = new int[INITIAL];
    private long bytes;
    /** The transferTo (or TLS file write) calls of the response being written. */
    private int transferCalls;

    /** A new response: no region. */
    void clear()
    {
        count = 0;
        index = 0;
        sent = 0;
        bytes = 0;
        transferCalls = 0;
    }

    /** Records that {@code length} bytes of {@code file} at {@code position} go at {@code outPosition}. */
    void add(final int outPosition, final FileChannel file, final long position, final int length)
    {
        if (count == at.length)
        {
            final int n = count * 2;
            at = java.util.Arrays.copyOf(at, n);
            channel = java.util.Arrays.copyOf(channel, n);
            filePosition = java.util.Arrays.copyOf(filePosition, n);
            this.length = java.util.Arrays.copyOf(this.length, n);
        }
        at[count] = outPosition;
        channel[count] = file;
        filePosition[count] = position;
        this.length[count] = length;
        count++;
        bytes += length;
    }

    /** The bytes of the regions recorded so far. */
    long bytes()
    {
        return bytes;
    }

    int count()
    {
        return count;
    }

    int transferCalls()
    {
        return transferCalls;
    }

    /** A region is still to be sent. */
    boolean pending()
    {
        return index < count;
    }

    /** Where the output is written up to before the next region goes: its position, or {@code outLength} after the last. */
    int stop(final int outLength)
    {
        return index < count ? at[index] : outLength;
    }

    /**
     * Sends what the socket takes of the current region (after the output before it); moves to the next once it is
     * all sent. Returns false when the socket is full, true when the caller goes on (the next region, the output after
     * it, or on TLS more of this region).
     */
    boolean transfer(final SocketChannel socket, final TlsChannel tls) throws IOException
    {
        final long remaining = length[index] - sent;
        if (remaining > 0)
        {
            // TLS cannot send a file region as it is: it is read into the engine a record at a time
            final long position = filePosition[index] + sent;
            final long n = tls == null ? channel[index].transferTo(position, remaining, socket)
                : tls.writeFile(channel[index], position, remaining);
            sent += n;
            transferCalls++;
            if (sent < length[index])
            {
                return tls != null && n != 0; // false: the socket is full
            }
        }
        channel[index] = null;
        index++;
        sent = 0;
        return true;
    }
}
