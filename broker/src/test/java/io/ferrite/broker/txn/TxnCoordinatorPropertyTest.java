package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random interleavings of client requests (current producers and zombies, TV1 and TV2 versions),
 * {@code __transaction_state} writes that succeed late or fail, markers, the sweeps and a moving
 * clock, against the coordinator's rules. After every step: an epoch never decreases for a producer
 * id; a state only follows one it may follow (Complete* only after its Prepare*); nothing is
 * prepared while a transition is pending, and a transition is pending exactly while its write or
 * its markers are under way (or, for a Complete* whose write failed but for COORDINATOR_NOT_AVAILABLE,
 * until the next load); an answer's producer id and epoch are the cache's; whenever nothing is under
 * way, replaying what was written gives back what the cache holds, at the epoch last written; and
 * across restarts (the log replayed into a new cache, writes under way lost, the load's Complete*
 * written again) no producer id is ever answered an epoch below one it was answered before.
 */
class TxnCoordinatorPropertyTest
{
    private static final String[] IDS = {"a", "b", "c"};
    private static final TxnPartition[] PARTITIONS = {new TxnPartition("x", 0), new TxnPartition("x", 1), new TxnPartition("y", 0)};

    private final Map<String, long[]> clients = new HashMap<>();
    private final List<TxnWrite> inFlight = new ArrayList<>();
    private final List<MarkerJob> markerJobs = new ArrayList<>();
    /** Complete* writes that failed with no retry: pending until the next load. */
    private final List<TxnWrite> stranded = new ArrayList<>();
    /** The producer epoch of the last record written per id (a tombstone removes it). */
    private final Map<String, Short> writtenEpoch = new HashMap<>();
    /** The highest epoch answered per producer id, across restarts. */
    private final Map<Long, Short> maxAnswered = new HashMap<>();
    private final Map<Long, Short> maxEpoch = new HashMap<>();
    private final Map<String, TxnState> lastState = new HashMap<>();
    private TxnHarness h;
    private Random random;

    @Property(tries = 300)
    void invariantsHold(@ForAll final long seed)
    {
        random = new Random(seed);
        clients.clear();
        inFlight.clear();
        markerJobs.clear();
        stranded.clear();
        writtenEpoch.clear();
        maxAnswered.clear();
        maxEpoch.clear();
        lastState.clear();
        h = new TxnHarness(new TxnConfig(900_000, 5, 3, 500_000 + random.nextInt(2) * 10_000_000L, (short)(random.nextInt(3))));
        for (int step = 0; step < 250; step++)
        {
            step();
            check("step " + step);
        }
    }

    private void step()
    {
        final String id = IDS[random.nextInt(IDS.length)];
        switch (random.nextInt(13))
        {
            case 0, 1 ->
            {
                final boolean expect = clients.containsKey(id) && random.nextBoolean();
                final long pid = expect ? pid(id) : -1;
                final int epoch = expect ? epoch(id) : -1;
                request(id, () -> h.init(id, pid, epoch), true);
            }
            case 2, 3 -> request(id, () -> h.add(id, pid(id), epoch(id), (short)(tv2() ? 4 : random.nextInt(4)), partition()), false);
            case 4 -> request(id, () -> AddPartitionsRules.addOffsets(h.cache, id, pid(id), (short)epoch(id), "g" + random.nextInt(3), h.now),
                false);
            case 5, 6 -> request(id, () -> h.end(id, pid(id), epoch(id), random.nextBoolean(), tv2() ? 5 : random.nextInt(5)), false);
            case 7 ->
            {
                final TxnMetadata before = h.get(id);
                final TxnTransit snapshot = before == null ? null : before.snapshot();
                AddPartitionsRules.verify(h.cache, id, pid(id), (short)epoch(id), Set.of(partition()));
                assertEquals(snapshot, before == null ? null : before.snapshot(), "verification changes nothing");
            }
            case 8 -> deliver();
            case 9 -> completeMarkers();
            case 10 -> h.now += random.nextInt(3) == 0 ? 100_000 : 1_000;
            case 11 -> sweep();
            default ->
            {
                if (random.nextInt(3) == 0)
                {
                    restart();
                }
            }
        }
    }

    private void request(final String id, final java.util.function.Supplier<TxnDecision> call, final boolean init)
    {
        final TxnMetadata before = h.get(id);
        final boolean pendingBefore = before != null && before.hasPendingTransition();
        final TxnTransit snapshot = before == null ? null : before.snapshot();
        final TxnDecision d = call.get();
        if (pendingBefore)
        {
            assertInstanceOf(Answer.class, d, "nothing is prepared while a transition is pending");
            assertEquals(snapshot, before.snapshot(), "a refused request changes nothing");
        }
        if (d instanceof TxnWrite w)
        {
            assertTrue(inFlight.stream().noneMatch(x -> x.transactionalId().equals(id)), "one write at a time per id");
            assertEquals(w.transit().state(), h.get(id).pendingState());
            inFlight.add(w);
        }
        else if (init && ((Answer)d).error() == Errors.NONE)
        {
            remember(id, (Answer)d);
        }
    }

    private void deliver()
    {
        if (inFlight.isEmpty())
        {
            return;
        }
        final TxnWrite w = inFlight.remove(random.nextInt(inFlight.size()));
        if (random.nextInt(5) == 0)
        {
            final TxnOutcome outcome = h.failed(w, random.nextBoolean() ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.REQUEST_TIMED_OUT);
            if (outcome.retry() != null)
            {
                inFlight.add(outcome.retry());
            }
            else if (w.then() == TxnWrite.Then.COMPLETED)
            {
                stranded.add(w);
            }
            if (outcome.answer() != null)
            {
                assertTrue(outcome.answer().error() == Errors.NOT_COORDINATOR || outcome.answer().error() == Errors.COORDINATOR_NOT_AVAILABLE);
            }
            return;
        }
        final TxnOutcome outcome = h.written(w);
        if (w.transit().state() == TxnState.DEAD)
        {
            writtenEpoch.remove(w.transactionalId());
        }
        else
        {
            writtenEpoch.put(w.transactionalId(), w.transit().producerEpoch());
        }
        if (w.then() == TxnWrite.Then.ANSWER_PRODUCER)
        {
            final TxnMetadata m = h.get(w.transactionalId());
            assertEquals(new Answer(Errors.NONE, m.producerId(), m.producerEpoch()), outcome.answer());
            remember(w.transactionalId(), outcome.answer());
        }
        if (outcome.markers() != null)
        {
            final MarkerJob job = outcome.markers();
            final TxnMetadata m = h.get(job.transactionalId());
            assertTrue(m.state().isPrepared());
            assertEquals(job.complete().transit().state(), m.pendingState());
            assertEquals(m.producerId(), job.producerId());
            assertEquals(m.producerEpoch(), job.producerEpoch());
            if (w.then() == TxnWrite.Then.ANSWER_END_TXN && TxnTransit.epochBump(w.transit().clientTransactionVersion()))
            {
                final TxnTransit next = job.complete().transit();
                assertEquals(new Answer(Errors.NONE, next.producerId(), next.producerEpoch()), outcome.answer());
                remember(w.transactionalId(), outcome.answer());
            }
            markerJobs.add(job);
        }
    }

    private void completeMarkers()
    {
        if (!markerJobs.isEmpty())
        {
            inFlight.add(markerJobs.remove(random.nextInt(markerJobs.size())).complete());
        }
    }

    private void sweep()
    {
        if (random.nextBoolean())
        {
            for (final String id : TxnSweeps.timedOut(h.cache, h.now))
            {
                final TxnMetadata m = h.get(id);
                assertEquals(TxnState.ONGOING, m.state());
                assertFalse(m.hasPendingTransition());
                final TxnWrite w = TxnSweeps.abortTimedOut(h.cache, h.ids, id, h.now);
                assertNotNull(w);
                assertEquals(TxnState.PREPARE_ABORT, w.transit().state());
                inFlight.add(w);
            }
        }
        else
        {
            for (final TxnWrite w : TxnSweeps.expire(h.cache, h.now))
            {
                assertTrue(w.transit().state() == TxnState.DEAD);
                inFlight.add(w);
            }
        }
    }

    /** The coordinator restarts: the log is what remains. */
    private void restart()
    {
        inFlight.clear();
        markerJobs.clear();
        stranded.clear();
        markerJobs.addAll(h.restart());
        // a TV1 fence whose abort failed took its epoch in memory only (never answered): it is gone now
        maxEpoch.clear();
        for (final TxnMetadata m : h.cache.all())
        {
            final Short answered = maxAnswered.get(m.producerId());
            assertTrue(answered == null || m.producerEpoch() >= answered, "after a restart " + m + " is below the epoch answered, "
                + answered);
        }
    }

    private void check(final String when)
    {
        for (final TxnMetadata m : h.cache.all())
        {
            final String id = m.transactionalId();
            final TxnState state = m.state();
            assertTrue(state != TxnState.DEAD && state != TxnState.PREPARE_EPOCH_FENCE, when + " " + m);
            if (state == TxnState.ONGOING || state == TxnState.PREPARE_COMMIT)
            {
                assertFalse(m.partitions().isEmpty(), when + " " + m);
            }
            if (state.isIdle())
            {
                assertTrue(m.partitions().isEmpty(), when + " " + m);
            }
            if (m.producerEpoch() >= 0)
            {
                final Short max = maxEpoch.get(m.producerId());
                assertTrue(max == null || m.producerEpoch() >= max, when + ": epoch went back for " + m);
                maxEpoch.put(m.producerId(), m.producerEpoch());
            }
            final TxnState previous = lastState.put(id, state);
            if (previous != null && previous != state)
            {
                assertTrue(state.mayFollow(previous), when + ": " + state + " after " + previous);
            }
            if (state == TxnState.COMPLETE_COMMIT && previous != state)
            {
                assertEquals(TxnState.PREPARE_COMMIT, previous, when);
            }
            if (state == TxnState.COMPLETE_ABORT && previous != state)
            {
                assertEquals(TxnState.PREPARE_ABORT, previous, when);
            }
            final boolean underWay = inFlight.stream().anyMatch(w -> w.transactionalId().equals(id))
                || markerJobs.stream().anyMatch(j -> j.transactionalId().equals(id))
                || stranded.stream().anyMatch(w -> w.transactionalId().equals(id));
            assertEquals(underWay, m.hasPendingTransition(), when + ": pending exactly while under way " + m);
        }
        lastState.keySet().removeIf(id -> h.get(id) == null);
        if (inFlight.isEmpty() && markerJobs.isEmpty() && stranded.isEmpty())
        {
            final TxnReplay.Loaded loaded = h.replay();
            assertEquals(ids(h.cache.all()), loaded.transactions().keySet(), when);
            assertEquals(writtenEpoch.keySet(), loaded.transactions().keySet(), when);
            for (final TxnMetadata m : h.cache.all())
            {
                final TxnTransit held = m.snapshot();
                final Short written = writtenEpoch.get(m.transactionalId());
                if (written == null)
                {
                    // created by an InitProducerId whose write failed: in memory only, as in Kafka
                    assertTrue(held.producerEpoch() < 0, when + " " + m);
                    continue;
                }
                final TxnTransit read = loaded.transactions().get(m.transactionalId()).snapshot();
                // a TV1 fence takes its epoch before its abort is written and keeps it when the write fails
                // (as Kafka does): the log holds the epoch before it, until a later write at the new epoch
                assertEquals((short)written, read.producerEpoch(), when + " replay of " + m.transactionalId());
                if (!m.failedEpochFence())
                {
                    assertEquals(held.producerEpoch(), read.producerEpoch(), when + " " + m);
                }
                // value version 0 (a cluster at transaction.version 0) has no room for the producer id links
                final boolean links = h.config.valueVersion() > 0;
                assertEquals(new TxnTransit(held.producerId(), links ? held.prevProducerId() : -1, links ? held.nextProducerId() : -1,
                    read.producerEpoch(), (short)-1, held.timeoutMs(), held.state(), held.partitions(), held.startTimestamp(),
                    held.lastUpdateTimestamp(), held.clientTransactionVersion()), read, when + " replay of " + m.transactionalId());
            }
            assertTrue(loaded.toComplete().isEmpty(), when);
        }
    }

    private static Set<String> ids(final java.util.Collection<TxnMetadata> all)
    {
        final java.util.Set<String> ids = new java.util.HashSet<>();
        for (final TxnMetadata m : all)
        {
            if (m.producerEpoch() >= 0)
            {
                ids.add(m.transactionalId());
            }
        }
        return ids;
    }

    /**
     * Whether this request comes from a TV2 client: only when the cluster's finalized level is 2 (a
     * client reads it from ApiVersions; a level-0 cluster writes value version 0, which cannot hold a TV2 client's state).
     */
    private boolean tv2()
    {
        return h.config.transactionVersion() == 2 && random.nextBoolean();
    }

    private void remember(final String id, final Answer a)
    {
        final Short answered = maxAnswered.get(a.producerId());
        assertTrue(answered == null || a.producerEpoch() >= answered, id + " answered " + a + " after epoch " + answered);
        maxAnswered.put(a.producerId(), a.producerEpoch());
        clients.put(id, new long[] {a.producerId(), a.producerEpoch()});
    }

    private long pid(final String id)
    {
        final long[] c = clients.get(id);
        if (c == null || random.nextInt(8) == 0)
        {
            return 1000 + random.nextInt(5);
        }
        return c[0];
    }

    /** The client's epoch, or a zombie's (one behind), or one ahead. */
    private int epoch(final String id)
    {
        final long[] c = clients.get(id);
        if (c == null)
        {
            return random.nextInt(3);
        }
        final int r = random.nextInt(10);
        return (int)c[1] + (r == 0 ? -1 : r == 1 ? 1 : 0);
    }

    private TxnPartition partition()
    {
        return PARTITIONS[random.nextInt(PARTITIONS.length)];
    }
}
