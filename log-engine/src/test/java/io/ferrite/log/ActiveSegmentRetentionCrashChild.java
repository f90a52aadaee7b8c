package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * {@link ActiveSegmentRetentionTest}'s crash child: an idempotent producer's log whose every segment retention deletes,
 * the active one after the writer's roll (as that test's steps), then {@code READY <next sequence> <log end>} and no
 * close: it waits for its SIGKILL. {@code ActiveSegmentRetentionCrashChild <log dir>}.
 */
public final class ActiveSegmentRetentionCrashChild
{
    private ActiveSegmentRetentionCrashChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final MutableClock clock = new MutableClock(ActiveSegmentRetentionTest.T0);
        final List<PartitionLog> rollsAsked = new ArrayList<>();
        final WriterTasks tasks = new WriterTasks()
        {
            @Override
            public void producerExpiryDue()
            {
            }

            @Override
            public void retentionRollDue(final PartitionLog log)
            {
                rollsAsked.add(log);
            }
        };
        final LogManager manager = LogManager.open(ActiveSegmentRetentionTest.managerConfig(Path.of(args[0]), clock, tasks), true);
        final PartitionLog log = manager.createLog("t", 0, ActiveSegmentRetentionTest.config("delete"));
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        int sequence = 0;
        while (log.segmentCount() < 3)
        {
            batches.producer(3, ActiveSegmentRetentionTest.PID, (short)0, sequence, false, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            if (result.status != AppendResult.OK)
            {
                throw new IllegalStateException(result.toString());
            }
            sequence += 3;
        }
        log.highWatermark(log.logEndOffset());
        clock.advance(ActiveSegmentRetentionTest.RETENTION_MS + 1_000);
        final AgentInvoker scheduler = manager.background().schedulerInvoker();
        scheduler.invoke(); // the sealed segments go, the writer is asked to roll
        for (final PartitionLog asked : rollsAsked)
        {
            asked.retentionRoll().run();
        }
        scheduler.invoke(); // the rolled segment goes
        if (log.logStartOffset() != log.logEndOffset() || log.segmentCount() != 1)
        {
            throw new IllegalStateException("not deleted: " + log.logStartOffset() + " " + log.segmentCount());
        }
        System.out.println("READY " + sequence + " " + log.logEndOffset());
        System.out.flush();
        while (true)
        {
            LockSupport.park(); // no close: the parent's SIGKILL
        }
    }
}
