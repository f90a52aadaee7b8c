package io.ferrite.broker.logthread;

import org.agrona.ErrorHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.Set;

/**
 * The faults a log thread survived: an append, a task or an answer that threw. Each is counted
 * (for a metrics endpoint to come) and each distinct cause — exception class and message — is
 * logged once with its stack trace: a failing disk fails every batch of its partitions, and a stack
 * trace per batch would bury the first one. Written by the log thread only; read from anywhere.
 *
 * <p>Also the log thread's Agrona {@link ErrorHandler}: what escapes its duty cycle comes here, and
 * a fault the thread cannot survive stops it ({@link LogThread#onClose} then answers every command
 * it still had).
 */
public final class LogThreadFaults implements ErrorHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(LogThreadFaults.class);
    /** Distinct causes kept: a message that embeds offsets could otherwise grow the set without end. */
    private static final int MAX_CAUSES = 64;

    private final int thread;
    /** Told of the first fault the thread cannot survive: the thread stops. */
    private final java.util.function.Consumer<Throwable> fatal;
    private final Set<String> causes = new HashSet<>();
    /** Single writer (the log thread), so a plain increment of the volatile is exact. */
    private volatile long count;
    private volatile int distinctCauses;

    LogThreadFaults(final int thread, final java.util.function.Consumer<Throwable> fatal)
    {
        this.thread = thread;
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
     * Counts {@code fault}, logs it if its cause is new, and stops the thread if it cannot survive
     * it (the caller has answered what it could first). Returns whether the thread carries on.
     */
    boolean survive(final String what, final Throwable fault)
    {
        count++;
        final boolean survivable = survivable(fault);
        if (!survivable)
        {
            fatal.accept(fault); // before the logging, which a JVM out of memory may not get through
        }
        final String cause = fault.getClass().getName() + ": " + fault.getMessage();
        if (causes.size() < MAX_CAUSES && causes.add(cause))
        {
            distinctCauses = causes.size();
            LOG.error("log thread {}: {} failed ({}; further failures with this cause are only counted)", thread, what,
                survivable ? "a command it served gets KAFKA_STORAGE_ERROR, the thread carries on" :
                    "not survivable: the thread stops, every command sent to it gets KAFKA_STORAGE_ERROR", fault);
            if (causes.size() == MAX_CAUSES)
            {
                LOG.error("log thread {}: {} distinct fault causes logged, later new ones are only counted", thread, MAX_CAUSES);
            }
        }
        return survivable;
    }

    /** Commands, tasks and answers that failed with an exception since the thread started. */
    public long count()
    {
        return count;
    }

    /** How many distinct causes were logged. */
    public int distinctCauses()
    {
        return distinctCauses;
    }
}
