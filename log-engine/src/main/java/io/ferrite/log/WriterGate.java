package io.ferrite.log;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * Who writes a {@link PartitionLog}, and what of the writer's work in the segments' mappings a
 * close() from another thread must wait for before it unmaps them: an append in progress or an
 * open claim.
 *
 * <p><b>The writer</b> is the thread that appended or claimed first, or the last to call
 * {@link PartitionLog#claimWriter}. Each writer entry records it ({@link #recordWriter}: a plain
 * load and compare, a plain store the first time) — on the normal path, because production runs
 * with {@code -da} and close() relies on it to tell the writer (whose open claim it aborts) from
 * another thread (whose claim it waits for). An {@code assert} then only compares
 * ({@link #onWriterThread}), as in Disruptor's {@code SingleProducerSequencer}. A plain field is
 * enough for close(): the writer records itself before its volatile store announcing a claim, and
 * close() reads it only after a volatile load that saw that claim.
 *
 * <p><b>The close handshake</b> is Dekker's: the writer announces its work with a volatile store
 * and then reads {@link #closing}; close() sets {@link #closing} and then reads the announcements.
 * Each side is a store, a full fence, a load, so at least one sees the other: either the writer
 * sees the close coming (and answers LOG_CLOSED), or close() sees the work and waits for its end (a
 * release store). An append pays one full fence (on x86 one locked instruction, a few ns against
 * the ~100 ns of a small append) and one release store (a plain store on x86); nothing allocates
 * and nothing blocks the writer.
 */
final class WriterGate
{
    private static final VarHandle APPENDING;
    private static final VarHandle OPEN_CLAIM;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            APPENDING = lookup.findVarHandle(WriterGate.class, "appending", int.class);
            OPEN_CLAIM = lookup.findVarHandle(WriterGate.class, "openClaim", BatchClaim.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private Thread writer;
    /** 1 while the writer is inside an append (through APPENDING). */
    @SuppressWarnings("unused")
    private int appending;
    /** The writer's open claim, or null (through OPEN_CLAIM). */
    @SuppressWarnings("unused")
    private BatchClaim openClaim;
    /** Set first by close(): no append starts and no claim opens from then on. */
    private volatile boolean closing;

    /** Makes the calling thread the writer if there is none yet. */
    void recordWriter()
    {
        if (writer == null)
        {
            writer = Thread.currentThread();
        }
    }

    /** Hands the writer role to the calling thread. */
    void claimWriter()
    {
        writer = Thread.currentThread();
    }

    /** Whether the calling thread is the recorded writer (for the assert; compares only). */
    boolean onWriterThread()
    {
        return writer == Thread.currentThread();
    }

    /** Announces an append; false, announcing nothing, when a close has begun. */
    boolean beginAppend()
    {
        APPENDING.setVolatile(this, 1);
        if (closing)
        {
            APPENDING.setRelease(this, 0);
            return false;
        }
        return true;
    }

    void endAppend()
    {
        APPENDING.setRelease(this, 0);
    }

    /** Announces an open claim; false, announcing nothing, when a close has begun. */
    boolean beginClaim(final BatchClaim claim)
    {
        OPEN_CLAIM.setVolatile(this, claim);
        if (closing)
        {
            OPEN_CLAIM.setRelease(this, null);
            return false;
        }
        return true;
    }

    void endClaim()
    {
        OPEN_CLAIM.setRelease(this, null);
    }

    /** The open claim as the writer itself sees it. */
    BatchClaim openClaim()
    {
        return (BatchClaim)OPEN_CLAIM.getOpaque(this);
    }

    /** The open claim as another thread (a new writer, close()) sees it. */
    BatchClaim openClaimVolatile()
    {
        return (BatchClaim)OPEN_CLAIM.getVolatile(this);
    }

    boolean closing()
    {
        return closing;
    }

    /** close()'s side: from now on no append starts and no claim opens. */
    void beginClose()
    {
        closing = true;
    }

    /**
     * close()'s wait, after {@link #beginClose}: until no append is in progress and no claim is open,
     * or the deadline ({@link System#nanoTime}) passes.
     *
     * @return whether the writer is out of the mappings
     */
    boolean awaitWriterOut(final long deadlineNs)
    {
        while ((int)APPENDING.getVolatile(this) != 0 || OPEN_CLAIM.getVolatile(this) != null)
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                return false;
            }
            // an append ends within microseconds (a roll within milliseconds); a claim lasts as
            // long as its writer takes to build the batch
            Thread.onSpinWait();
            LockSupport.parkNanos(100_000L);
        }
        return true;
    }
}
