package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;

/** Log threads for tests that step them themselves (an AgentInvoker) and need no completion signal. */
public final class SteppedLogThreads
{
    /** Tells nothing: the test steps the log thread and reads its answers itself. */
    public static final LogThread.Completion SILENT = new LogThread.Completion()
    {
        @Override
        public void completed(final int networkThread)
        {
        }

        @Override
        public void highWatermarkAdvanced(final Partition partition)
        {
        }
    };

    private SteppedLogThreads()
    {
    }

    /** Log thread 0 with {@code senders} senders (the network threads', then the coordinators') and a queue of {@code capacity}. */
    public static LogThread silent(final int senders, final int capacity)
    {
        return new LogThread(0, senders, capacity, SILENT);
    }
}
