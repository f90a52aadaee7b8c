package io.ferrite.broker.coordinator;

import io.ferrite.broker.Broker;
import io.ferrite.broker.Errors;
import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.group.OffsetsTopicBroker;
import io.ferrite.broker.topic.Partition;
import io.ferrite.log.AppendResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@link CoordinatorLog} makes of its log threads' answers: a marker appended OK is answered OK
 * even when the hook told of it ({@link CoordinatorLog.MarkersAppended}, the group coordinator's
 * ending of the transaction's offsets) throws, so that the transaction's run of markers finishes
 * rather than stay in Prepare*; and a coordinator batch's append answered anything but OK is a failed
 * write — DUPLICATE (nothing appended) included, so that nothing is stored at offsets it does not have.
 */
class CoordinatorLogAnswersTest
{
    @TempDir
    Path dir;

    @Test
    void aMarkerIsAnsweredWhenTheHookToldOfItThrows() throws Exception
    {
        final Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator groups = broker.groups();
            final CoordinatorAgent agent = groups.agent();
            final Partition partition = broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0];
            final CoordinatorLog log = runtime(groups).log();
            final AtomicInteger hookRan = new AtomicInteger();
            final CompletableFuture<Short> answered = new CompletableFuture<>();
            agent.call(groups, (c, now) ->
            {
                log.markersAppended((p, producerId, commit) ->
                {
                    hookRan.incrementAndGet();
                    throw new IllegalStateException("the hook fails (a test)");
                });
                log.writeMarker(partition, 7, (short)0, 0, false, false, answered::complete);
                return null;
            }).get(20, TimeUnit.SECONDS);
            await(answered::isDone, Duration.ofSeconds(20), "the marker answered");
            assertEquals(Errors.NONE, answered.get());
            assertEquals(1, hookRan.get(), "the hook was told of the marker");
        }
        finally
        {
            broker.close();
        }
    }

    @Test
    void aCoordinatorBatchAnsweredAnythingButOkIsAFailedWrite()
    {
        assertEquals(Errors.NONE, CoordinatorLog.writeError(AppendResult.OK, CoordinatorLog::ofFailedWrite));
        assertEquals(Errors.UNKNOWN_SERVER_ERROR, CoordinatorLog.writeError(AppendResult.DUPLICATE, CoordinatorLog::ofFailedWrite),
            "nothing was appended");
        assertEquals(Errors.NOT_COORDINATOR, CoordinatorLog.writeError(AppendResult.LOG_CLOSED, CoordinatorLog::ofFailedWrite));
    }

    private static CoordinatorRuntime runtime(final GroupCoordinator groups)
    {
        try
        {
            final java.lang.reflect.Field f = GroupCoordinator.class.getDeclaredField("runtime");
            f.setAccessible(true);
            return (CoordinatorRuntime)f.get(groups);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new AssertionError(ex);
        }
    }
}
