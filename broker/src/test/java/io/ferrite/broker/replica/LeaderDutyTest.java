package io.ferrite.broker.replica;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link LeaderDuty} stepped on the test's thread (its log thread here) over real partitions' logs. */
class LeaderDutyTest
{
    private static final long LAG_MS = 30_000;

    @TempDir
    Path dir;
    private LogManager logs;
    private TopicRegistry registry;
    /** The node's eligible brokers: every one until a test publishes the image's. */
    private final IsrEligibility eligibility = new IsrEligibility();

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
    }

    @AfterEach
    void close() throws Exception
    {
        logs.close();
    }

    /** {@code partition} with one record appended, led with follower 2 in the ISR. */
    private LeaderReplicas led(final LeaderDuty duty, final Partition partition, final long nowMs)
    {
        return led(duty, partition, nowMs, IsrProposals.NONE);
    }

    private LeaderReplicas led(final LeaderDuty duty, final Partition partition, final long nowMs, final IsrProposals proposals)
    {
        return led(duty, partition, nowMs, proposals, new int[] {1, 2});
    }

    /** {@code partition} with one record appended, led by 1 with {@code replicas} (1 among them), all in the ISR. */
    private LeaderReplicas led(final LeaderDuty duty, final Partition partition, final long nowMs, final IsrProposals proposals,
        final int[] replicas)
    {
        partition.log.claimWriter();
        append(partition, nowMs);
        final LeaderReplicas led = new LeaderReplicas(partition, 1, 0, replicas, replicas, partition.log.logEndOffset(), nowMs,
            LAG_MS, proposals, duty, eligibility);
        duty.lead(led);
        return led;
    }

    /** One record appended to {@code partition} (the leader's append, at acks=1: nothing waits for the followers). */
    private static void append(final Partition partition, final long nowMs)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(256);
        final int length = new RecordBatchBuilder().wrap(buffer, 0)
            .appendRecord(nowMs, null, 0, -1, new UnsafeBuffer(new byte[10]), 0, 10).build();
        final AppendResult result = new AppendResult();
        partition.log.append(buffer, 0, length, result);
        assertEquals(AppendResult.OK, result.status, result.message);
    }

    /**
     * Review M1 of rtrunc: a follower that stopped fetching is proposed out after the lag and never back in by the
     * periodic pass (Kafka 4.4 grows the ISR on that follower's fetch only), even with the ISR below
     * min.insync.replicas and the high watermark held at the follower's last log end; its next fetch, caught up,
     * proposes it in.
     */
    @Test
    void aFollowerIsProposedBackIntoTheIsrOnlyOnAFetchOfItsOwn() throws Exception
    {
        final List<List<Integer>> proposals = new ArrayList<>();
        final LeaderDuty duty = new LeaderDuty(() -> { }, p -> { }, p -> { }, 4);
        final long now = 1_000_000;
        final Partition partition = registry.create("expand", 1, Map.of("min.insync.replicas", "2")).partitions[0];
        final LeaderReplicas replicas = led(duty, partition, now,
            (topic, index, epoch, isr) -> proposals.add(Arrays.stream(isr).boxed().toList()));
        duty.doWork(now); // the first periodic pass: the next is half the lag away
        replicas.fetched(replicas.follower(2), 1, now + 1, 1, IsrEligibility.NO_EPOCH);
        duty.doWork(now + 1);
        assertEquals(1, partition.log.highWatermark(), "follower 2 fetched past the first record");
        append(partition, now + 2); // follower 2 never fetches again
        duty.appended(replicas, now + 2);

        long t = now + LAG_MS + 2;
        duty.doWork(t); // a periodic pass: follower 2 is not caught up within the lag
        assertEquals(List.of(List.of(1)), proposals);
        replicas.isr(new int[] {1}); // the controller's answer
        for (int pass = 0; pass < 4; pass++)
        {
            t += LAG_MS / 2;
            duty.doWork(t);
        }
        assertEquals(List.of(List.of(1)), proposals, "a follower that did not fetch is not proposed back in");
        assertEquals(1, partition.log.highWatermark(), "below min.insync.replicas the high watermark stays (KIP-966)");
        assertEquals(1, replicas.maximalIsrSize());

        // a fetch at the high watermark: in sync again
        replicas.fetched(replicas.follower(2), 1, t + 1, 2, IsrEligibility.NO_EPOCH);
        duty.doWork(t + 1);
        assertEquals(List.of(List.of(1), List.of(1, 2)), proposals, "proposed in on its fetch");
    }

    /**
     * Issue 14 (kill-the-leader: acks=all stalled ~replica.lag.time.max.ms after a follower died): a follower outside
     * the ISR that caught up within the lag holds the high watermark back only while its broker is ISR-eligible (Kafka
     * 4.4's {@code shouldWaitForReplicaToJoinIsr}); once the image fences it, the high watermark moves at once to what
     * the ISR has, though the dead follower's last catch-up is well within the lag.
     */
    @Test
    void aFencedFollowerOutsideTheIsrNoLongerHoldsTheHighWatermark() throws Exception
    {
        final LeaderDuty duty = new LeaderDuty(() -> { }, p -> { }, p -> { }, 4);
        final long now = 1_000_000;
        final Partition partition = registry.create("fenced", 1, Map.of("min.insync.replicas", "2")).partitions[0];
        final LeaderReplicas replicas = led(duty, partition, now, IsrProposals.NONE, new int[] {1, 2, 3});
        eligibility.publish(new int[] {3, 1, 2}, new long[] {30, 10, 20});
        duty.doWork(now); // the first periodic pass: the next is half the lag away
        replicas.fetched(replicas.follower(2), 1, now + 1, 1, 20);
        replicas.fetched(replicas.follower(3), 1, now + 1, 1, 30);
        duty.doWork(now + 1);
        assertEquals(1, partition.log.highWatermark(), "both followers fetched past the first record");

        append(partition, now + 2); // an acks=all append: follower 3's broker dies before it fetches it
        duty.appended(replicas, now + 2);
        replicas.fetched(replicas.follower(2), 2, now + 3, 2, 20);
        duty.doWork(now + 3);
        assertEquals(1, partition.log.highWatermark(), "follower 3 is in the ISR");

        replicas.isr(new int[] {1, 2}); // an ISR without 3 while its broker is still registered and unfenced
        replicas.nudge();
        duty.doWork(now + 4);
        assertEquals(1, partition.log.highWatermark(), "a caught-up, eligible follower outside the ISR is waited for");

        eligibility.publish(new int[] {1, 2}, new long[] {10, 20}); // the controller fenced broker 3
        duty.lookAgain();
        duty.doWork(now + 5);
        assertEquals(2, partition.log.highWatermark(), "a fenced follower is not waited for");
        assertEquals(1, replicas.follower(3).logEndOffset());
        assertTrue(now + 5 - replicas.follower(3).lastCaughtUpTimeMs() < LAG_MS, "still caught up within the lag");
    }

    /**
     * Kafka 4.4's {@code canAddReplicaToIsr}: a follower at the high watermark is proposed into the ISR only while its
     * broker is ISR-eligible: not while fenced, not with a fetch naming a broker epoch other than the image's; a fetch
     * naming the image's epoch, or none (-1), is.
     */
    @Test
    void aFencedOrStaleEpochFollowerIsNotProposedIntoTheIsr() throws Exception
    {
        final List<List<Integer>> proposals = new ArrayList<>();
        final LeaderDuty duty = new LeaderDuty(() -> { }, p -> { }, p -> { }, 4);
        final long now = 1_000_000;
        final Partition partition = registry.create("rejoin", 1, Map.of("min.insync.replicas", "2")).partitions[0];
        final LeaderReplicas replicas = led(duty, partition, now,
            (topic, index, epoch, isr) -> proposals.add(Arrays.stream(isr).boxed().toList()), new int[] {1, 2, 3});
        eligibility.publish(new int[] {1, 2}, new long[] {10, 20}); // broker 3 fenced
        replicas.isr(new int[] {1, 2});
        duty.doWork(now);
        replicas.fetched(replicas.follower(2), 1, now + 1, 1, 20);
        replicas.fetched(replicas.follower(3), 1, now + 1, 1, 30); // a fenced broker's fetch at the high watermark
        duty.doWork(now + 1);
        assertEquals(1, partition.log.highWatermark());
        assertEquals(List.of(), proposals, "a fenced broker is not proposed into the ISR");

        eligibility.publish(new int[] {1, 2, 3}, new long[] {10, 20, 31}); // broker 3 restarted: a new broker epoch
        duty.lookAgain();
        replicas.fetched(replicas.follower(3), 1, now + 2, 1, 30); // a fetch of its previous incarnation
        duty.doWork(now + 2);
        assertEquals(List.of(), proposals, "a fetch naming a stale broker epoch is not proposed in");

        replicas.fetched(replicas.follower(3), 1, now + 3, 1, 31);
        duty.doWork(now + 3);
        assertEquals(List.of(List.of(1, 2, 3)), proposals, "proposed in on a fetch of its current broker epoch");

        replicas.proposalFailed();
        replicas.fetched(replicas.follower(3), 1, now + 4, 1, -1);
        duty.doWork(now + 4);
        assertEquals(List.of(List.of(1, 2, 3), List.of(1, 2, 3)), proposals, "a fetch naming no broker epoch matches any");
    }

    @Test
    void nudgesAFullQueueRefusedAreLookedAtInTheNextCycle() throws Exception
    {
        final LeaderDuty duty = new LeaderDuty(() -> { }, p -> { }, p -> { }, 2);
        final long now = 1_000_000;
        final Partition[] partitions = registry.create("led", 3, Map.of()).partitions;
        final LeaderReplicas[] all = new LeaderReplicas[partitions.length];
        for (int i = 0; i < partitions.length; i++)
        {
            all[i] = led(duty, partitions[i], now);
        }
        duty.doWork(now); // the first periodic pass: the next is half the lag away
        for (final LeaderReplicas r : all)
        {
            assertEquals(0, r.partition.log.highWatermark());
            // one follower request over all three: 3 nudges, room for 2
            r.fetched(r.follower(2), 1, now + 1, 1, IsrEligibility.NO_EPOCH);
        }
        assertEquals(1, all[2].refusedNudges());
        duty.doWork(now + 1);
        for (final LeaderReplicas r : all)
        {
            assertEquals(1, r.partition.log.highWatermark(), r.toString());
        }
    }

    /** Review H2: a nudge queued before this node stopped leading (it follows now) moves no high watermark. */
    @Test
    void aNudgeQueuedBeforeAnUnleadMovesNothing() throws Exception
    {
        final java.util.List<Partition> unled = new java.util.ArrayList<>();
        final LeaderDuty duty = new LeaderDuty(() -> { }, p -> { }, unled::add, 4);
        final long now = 1_000_000;
        final Partition partition = registry.create("unled", 1, Map.of()).partitions[0];
        final LeaderReplicas replicas = led(duty, partition, now);
        duty.doWork(now); // the first periodic pass
        // follower 2 has offset 0: a nudge is queued
        replicas.fetched(replicas.follower(2), 1, now + 1, 1, IsrEligibility.NO_EPOCH);
        duty.unlead(partition);
        assertEquals(java.util.List.of(partition), unled, "told what it held for the partition goes back");
        duty.doWork(now + 1);
        assertEquals(0, partition.log.highWatermark(), "moved by a leader state no longer installed");
    }

    /**
     * Issue 14 (kafka-reassign-partitions): the controller adds replica 3 at the same leader epoch. The leadership with
     * the new replica set keeps follower 2's state (the one its fetches under way write) and the epoch's start; an
     * added replica is a follower the leader serves and proposes into the ISR once its fetch caught up.
     */
    @Test
    void aReplicaAddedAtTheSameEpochIsServedAndProposedIntoTheIsr() throws Exception
    {
        final List<List<Integer>> proposals = new ArrayList<>();
        final LeaderDuty duty = new LeaderDuty(() -> { }, p -> { }, p -> { }, 4);
        final long now = 1_000_000;
        final Partition partition = registry.create("moved", 1, Map.of("min.insync.replicas", "2")).partitions[0];
        final LeaderReplicas before = led(duty, partition, now,
            (topic, index, epoch, isr) -> proposals.add(Arrays.stream(isr).boxed().toList()));
        before.fetched(before.follower(2), 1, now + 1, 1, IsrEligibility.NO_EPOCH);
        duty.doWork(now + 1);
        assertEquals(null, before.follower(3), "3 is no replica yet");

        final LeaderReplicas after = before.reassigned(new int[] {1, 2, 3}, new int[] {1, 2}, now + 2);
        duty.lead(after);
        assertTrue(partition.replicas() == after && after.sameReplicas(new int[] {3, 2, 1}) && !before.sameReplicas(new int[] {1, 2, 3}));
        assertTrue(after.follower(2) == before.follower(2), "follower 2's state is kept");
        assertEquals(before.epochStartOffset, after.epochStartOffset);
        assertEquals(0, after.leaderEpoch);
        after.fetched(after.follower(3), 0, now + 3, 1, IsrEligibility.NO_EPOCH); // behind: not in sync
        duty.doWork(now + 3);
        assertEquals(List.of(), proposals, "3 behind the high watermark is not proposed in");
        after.fetched(after.follower(3), 1, now + 4, 1, IsrEligibility.NO_EPOCH);
        duty.doWork(now + 4);
        assertEquals(List.of(List.of(1, 2, 3)), proposals, "3 caught up: proposed in");
    }
}
