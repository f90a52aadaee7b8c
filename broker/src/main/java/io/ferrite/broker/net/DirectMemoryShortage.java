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
}
