package io.ferrite.broker.logthread;

import io.ferrite.log.AgentErrors;
import org.agrona.ErrorHandler;

/**
 * The faults a log thread met: an append, a task or an answer that threw. Each is counted (for a
 * metrics endpoint to come) and each distinct one is kept and logged once with its stack trace, in
 * the shared distinct-error log ({@link AgentErrors}): a failing disk fails every batch of its
 * partitions, and a stack trace per batch would bury the first one. Written by the log thread only;
 * read from anywhere.
 *
 * <p>Also the log thread's Agrona {@link ErrorHandler}: what escapes its duty cycle comes here, and
 * a fault the thread cannot survive ({@link #survivable}) stops it ({@link LogThread#onClose} then
 * answers every command it still had).
 */
public final class LogThreadFaults implements ErrorHandler
{
    private final AgentErrors errors;
    /** Told of the first fault the thread cannot survive: the thread stops. */
    private final java.util.function.Consumer<Throwable> fatal;

    LogThreadFaults(final int thread, final java.util.function.Consumer<Throwable> fatal)
    {
        this.errors = new AgentErrors("log thread " + thread,
            "a command it served gets KAFKA_STORAGE_ERROR, the thread carries on");
        this.fatal = fatal;
    }

    /**
     * Whether the thread may carry on after {@code fault}. A {@link VirtualMachineError} says the JVM
     * itself is failing (out of memory, stack overflow): carrying on would hide that. Except
     * {@link InternalError}, which the JVM raises for an access to a mapped file that faults (SIGBUS:
     * the file was truncated, the disk went away) — a storage fault of one log, not of the JVM.
     */
    public static boolean survivable(final Throwable fault)
    {
        return !(fault instanceof VirtualMachineError) || fault instanceof InternalError;
    }

    /** What escaped the duty cycle (from the AgentRunner or AgentInvoker). */
    @Override
    public void onError(final Throwable fault)
    {
        survive("the duty cycle", fault);
    }

    /**
     * Counts {@code fault}, logs it if it is new, and stops the thread if it cannot survive it (the
     * caller has answered what it could first). Returns whether the thread carries on.
     */
    boolean survive(final String what, final Throwable fault)
    {
        if (!survivable(fault))
        {
            fatal.accept(fault); // before the logging, which a JVM out of memory may not get through
            errors.onFatal(what, fault, "the thread stops, every command sent to it gets KAFKA_STORAGE_ERROR");
            return false;
        }
        errors.onError(what, fault);
        return true;
    }

    /** Commands, tasks and answers that failed with an exception since the thread started. */
    public long count()
    {
        return errors.count();
    }

    /** How many distinct faults were logged. */
    public int distinctCauses()
    {
        return errors.distinct();
    }
}
