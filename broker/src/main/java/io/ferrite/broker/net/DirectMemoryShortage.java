package io.ferrite.broker.net;

import java.io.IOException;

/**
 * A connection's buffer could not be had: the JVM's direct memory ({@code -XX:MaxDirectMemorySize}) is used up. It costs
 * only that connection (refused at accept, or closed), with one WARN line and a count ({@link NetworkStats#outOfDirectMemory});
 * the thread and its other connections go on, and what the closed connection held is given back. Stackless: it is
 * met under a flood of connections, where a stack trace per connection would cost what is short.
 */
final class DirectMemoryShortage extends IOException
{
    private static final long serialVersionUID = 1L;

    private DirectMemoryShortage(final String message)
    {
        super(message, null);
    }

    @Override
    public synchronized Throwable fillInStackTrace()
    {
        return this;
    }

    /** The JDK's refusal ({@code Cannot reserve N bytes of direct buffer memory ...}) as this exception. */
    static DirectMemoryShortage of(final OutOfMemoryError ex)
    {
        return new DirectMemoryShortage("out of direct memory: " + ex.getMessage());
    }

    /**
     * The network thread's budget ({@link DirectBudget}) has no room for {@code bytes} more: refused before the JDK is
     * asked, so its wait and full collection are not paid (tls review 1, M1).
     */
    static DirectMemoryShortage budget(final int bytes, final long used, final long limit)
    {
        return new DirectMemoryShortage("out of direct memory: the network thread's budget for connection buffers has "
            + (limit - used) + " of " + limit + " bytes left, " + bytes + " asked");
    }

    /**
     * {@code ex} as this exception if it is the JDK's refusal of a direct buffer ({@link #isRefusal}); any other
     * OutOfMemoryError (the heap, the JVM's own memory) is thrown on: it is the JVM's, not one connection's.
     */
    static DirectMemoryShortage orRethrow(final OutOfMemoryError ex)
    {
        if (!isRefusal(ex))
        {
            throw ex;
        }
        return of(ex);
    }

    /**
     * Whether {@code ex} is {@code java.nio.Bits.reserveMemory}'s refusal of a direct buffer ({@code -XX:MaxDirectMemorySize}
     * used up: "Cannot reserve N bytes of direct buffer memory ...", "Direct buffer memory" before JDK 16), which costs
     * only the connection whose buffer it was, wherever it grew (review H1: a response growing its output).
     */
    static boolean isRefusal(final Throwable ex)
    {
        if (!(ex instanceof OutOfMemoryError))
        {
            return false;
        }
        final String message = ex.getMessage();
        return message != null && (message.startsWith("Cannot reserve ") || message.equals("Direct buffer memory"));
    }
}
