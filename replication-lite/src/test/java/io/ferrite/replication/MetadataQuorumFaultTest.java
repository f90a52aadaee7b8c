package io.ferrite.replication;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.ferrite.testing.Await;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.fault.FaultHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A committed record the node cannot apply is fatal, as in Kafka: the node stops, and says so. */
class MetadataQuorumFaultTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aRecordTheListenerCannotApplyStopsTheNodeAndFailsItsAppends() throws Exception
    {
        final RuntimeException cannotApply = new IllegalArgumentException("broker 2 is unknown here");
        final Queue<Integer> applied = new ConcurrentLinkedQueue<>();
        final MetadataQuorum.Listener listener = (offset, record) ->
        {
            final int id = ((UnfenceBrokerRecord)record.message()).id();
            if (id == 2)
            {
                throw cannotApply;
            }
            applied.add(id);
        };
        final Queue<Throwable> faults = new ConcurrentLinkedQueue<>();
        final FaultHandler recording = (message, cause) ->
        {
            faults.add(cause);
            return new RuntimeException(message, cause);
        };
        try (MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of()), dir, listener, recording))
        {
            Await.await(quorum::isLeader, DEADLINE, () -> "the single voter to lead; leader " + quorum.leaderId());
            unfence(quorum, 1).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            final CompletableFuture<Long> unapplicable = unfence(quorum, 2);
            final CompletableFuture<Long> after = unfence(quorum, 3);

            final ExecutionException refused = assertThrows(ExecutionException.class,
                () -> unapplicable.get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            assertSame(cannotApply, refused.getCause().getCause(), "the append fails with the listener's exception");
            assertThrows(ExecutionException.class, () -> after.get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            // MetadataQuorum#fail fails the pending appends before it calls the fault handler: wait for the call
            Await.await(() -> !faults.isEmpty(), DEADLINE, "the fault handler called");
            assertEquals(List.of(cannotApply), List.copyOf(faults), "the fault handler heard of it once");
            assertSame(cannotApply, quorum.failure().orElseThrow());
            assertFalse(quorum.isLeader(), "a failed node does not lead");
            assertTrue(unfence(quorum, 4).isCompletedExceptionally(), "a failed node takes no append");
            assertEquals(List.of(1), List.copyOf(applied), "no record after the one that could not be applied");
        }
    }

    private static CompletableFuture<Long> unfence(final MetadataQuorum quorum, final int id)
    {
        return quorum.append(List.of(new ApiMessageAndVersion(new UnfenceBrokerRecord().setId(id), (short)0)));
    }
}
