package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The order of the strays' migration ({@link StrayMigration}), with the coordinators' agent and the log
 * thread each stepped by this test's thread: a stray is deleted only after the log thread answered its
 * group's write home OK, never with it, and never when that write failed.
 */
class StrayMigrationOrderTest
{
    private static final int PARTITIONS = 4;
    /** The coordinator's slot on the log thread's queues (after one network thread's), as the broker sets them up. */
    private static final int SENDER = 1;
    private static final String GROUP = "billing";
    private static final int HOME = CoordinatorTopic.partitionFor(GROUP, PARTITIONS);
    private static final int STRAY = (HOME + 1) % PARTITIONS;

    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry topics;
    private LogThread logThread;
    private AgentInvoker agent;
    private AgentInvoker logThreadInvoker;
    private CoordinatorRuntime runtime;
    private GroupCoordinator coordinator;
    /** The coordinator's monotonic clock, moved by hand: its ticks come when this test says. */
    private final CachedNanoClock monotonic = new CachedNanoClock();

    /** {@code __consumer_offsets} made with {@code overrides}, the group's two offsets planted in STRAY (a batch each), the coordinator loaded. */
    private void open(final Map<String, String> overrides) throws Exception
    {
        open(overrides, () ->
        {
            plant(offsetRecord(GROUP, 0, 5));
            plant(offsetRecord(GROUP, 1, 8));
        });
    }

    private void open(final Map<String, String> overrides, final Runnable strays) throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer, and the log thread's and the agent's
        topics.create(GroupCoordinator.OFFSETS_TOPIC, PARTITIONS, overrides);
        strays.run();
        // the coordinator's commands in flight on the log thread at most: the broker's 4096
        logThread = new LogThread(0, 2, 4096, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
            }
        });
        final CachedEpochClock wall = new CachedEpochClock();
        wall.update(1_700_000_000_000L);
        runtime = new CoordinatorRuntime(topics, new AdminAgent(topics), new LogThread[] {logThread}, SENDER,
            new CoordinatorClock(wall, monotonic));
        coordinator = new GroupCoordinator(topics,
            new GroupCoordinator.Settings(10, 300_000, 0, 100, 7L * 24 * 3600 * 1000, 600_000, PARTITIONS, 1 << 20, 4096), runtime);
        coordinator.load();
        agent = new AgentInvoker(Throwable::printStackTrace, null, coordinator.agent());
        logThreadInvoker = new AgentInvoker(logThread.faults(), null, logThread);
        logThreadInvoker.start();
    }

    @AfterEach
    void close() throws Exception
    {
        if (agent != null)
        {
            agent.close();
            logThreadInvoker.close();
        }
        if (logs != null)
        {
            logs.close();
        }
    }

    @Test
    void theStraysAreDeletedOnlyOnceTheGroupsWriteHomeIsAnsweredOk() throws Exception
    {
        open(Map.of());
        agent.start(); // the agent's start sends the group's state home
        assertEquals(1, logThread.waitingCommands(), "the write home alone: the strays' tombstones wait for its answer");
        stepLogThreadUntilAnswered();
        assertEquals(2, end(STRAY), "no tombstone before the write home is answered");
        assertEquals(2, end(HOME), "the group's two offsets, home");

        agent.invoke(); // applies the answer: the tombstones go out
        assertEquals(1, logThread.waitingCommands(), "the strays' tombstones, one batch");
        stepLogThreadUntilAnswered();
        agent.invoke();
        assertEquals(2 + 2, end(STRAY), "a tombstone per stray key");

        final Map<String, Group> replayed = new HashMap<>();
        final GroupReplay.Loaded again = GroupReplay.load(topics, replayed, 0);
        assertEquals(Map.of(), again.strays(), "no live stray left: the next start does not migrate again");
        assertEquals(Map.of(new Group.TopicPartition("orders", 0), 5L, new Group.TopicPartition("orders", 1), 8L), offsets(replayed));
    }

    /**
     * The write home refused (the group's state is one batch larger than the topic's max.message.bytes,
     * whereas each stray was a batch of its own): no stray is deleted, and the next start finds them
     * all live again.
     */
    @Test
    void whenTheGroupsWriteHomeFailsNoStrayIsDeleted() throws Exception
    {
        open(Map.of("max.message.bytes", "150"));
        agent.start();
        stepLogThreadUntilAnswered();
        agent.invoke(); // applies the failed answer
        assertEquals(0, logThread.waitingCommands(), "nothing sent after the failed write home");
        assertEquals(2, end(STRAY));
        assertEquals(0, end(HOME));
        final Map<String, Group> replayed = new HashMap<>();
        assertEquals(1, GroupReplay.load(topics, replayed, 0).strays().size(), "the group's strays, live for the next start");
        assertEquals(Map.of(new Group.TopicPartition("orders", 0), 5L, new Group.TopicPartition("orders", 1), 8L), offsets(replayed));
    }

    /**
     * More groups with strays than may move at once: the agent's start sends the first {@value
     * StrayMigration#MOST_UNDER_WAY} groups' writes home, not all, and its later passes move the others
     * (thousands at once would fill the coordinator's queue to the log thread, and those past it fail).
     */
    @Test
    void atMostSoManyGroupsMoveAtOnceAndTheOthersAfterThem() throws Exception
    {
        final int count = StrayMigration.MOST_UNDER_WAY + 10;
        final List<byte[][]> records = new ArrayList<>();
        strayGroups(count).forEach(id -> records.add(offsetRecord(id, 0, 5)));
        open(Map.of(), () -> plant(records.toArray(new byte[0][][])));
        agent.start();
        assertEquals(StrayMigration.MOST_UNDER_WAY, logThread.waitingCommands(), "the first groups' writes home");
        await(() ->
        {
            logThreadInvoker.invoke();
            agent.invoke();
            monotonic.advance(TimeUnit.MILLISECONDS.toNanos(CoordinatorAgent.TICK_MS)); // the next pass ticks
            return end(STRAY) == 2L * count;
        }, Duration.ofSeconds(20), "a tombstone per group in " + GroupCoordinator.OFFSETS_TOPIC + "-" + STRAY);
        final Map<String, Group> replayed = new HashMap<>();
        assertEquals(Map.of(), GroupReplay.load(topics, replayed, 0).strays());
        assertEquals(count, replayed.size(), "every group, home");
    }

    /**
     * A group whose turn comes while a request's write of it is on its way (a commit from outside the
     * group) moves once that write is answered: its state written behind the commit would undo it.
     */
    @Test
    void aGroupWithARequestsWriteOnItsWayMovesAfterIt() throws Exception
    {
        final List<String> ids = strayGroups(StrayMigration.MOST_UNDER_WAY + 1);
        final String late = ids.get(ids.size() - 1); // past the first ones: moved at a tick
        final List<byte[][]> records = new ArrayList<>();
        ids.forEach(id -> records.add(offsetRecord(id, 0, 5)));
        open(Map.of(), () -> plant(records.toArray(new byte[0][][])));
        agent.start();
        final Group.TopicPartition tp = new Group.TopicPartition("orders", 0);
        coordinator.agent().call(coordinator, (c, nowMs) -> c.commitOffsets(late, -1, "", null, (short)8,
            Map.of(tp, new OffsetCommits.Asked(77, -1, ""))));
        await(() ->
        {
            logThreadInvoker.invoke();
            agent.invoke(); // the commit runs in the first pass, before that pass's tick
            monotonic.advance(TimeUnit.MILLISECONDS.toNanos(CoordinatorAgent.TICK_MS));
            return end(STRAY) == 2L * ids.size();
        }, Duration.ofSeconds(20), "a tombstone per group in " + GroupCoordinator.OFFSETS_TOPIC + "-" + STRAY);
        final Map<String, Group> replayed = new HashMap<>();
        assertEquals(Map.of(), GroupReplay.load(topics, replayed, 0).strays());
        assertEquals(77, replayed.get(late).offsets.get(tp).offset(), "the commit, not the stray it replaced");
    }

    /**
     * A group with offsets pending in a transaction open across the restart moves once the transaction
     * ended: its committed offsets written home before would be later in the log than the transaction's
     * records, and its COMMIT would not take them (Kafka's later-record rule) — in memory, nor at the next
     * start. Before, the group moved at once and the transaction's committed offset was lost.
     */
    @Test
    void aGroupWithOffsetsPendingInATransactionMovesOnceItEnds() throws Exception
    {
        final long producerId = 42;
        open(Map.of(), () ->
        {
            plant(offsetRecord(GROUP, 0, 5));
            final PartitionLog home = topics.topic(GroupCoordinator.OFFSETS_TOPIC).partitions[HOME].log;
            append(home, producerId, offsetRecord(GROUP, 0, 7)); // open: its marker is not in the log
        });
        agent.start();
        assertEquals(0, logThread.waitingCommands(), "nothing moves while the transaction is open");
        final Partition home = topics.topic(GroupCoordinator.OFFSETS_TOPIC).partitions[HOME];
        // its COMMIT, as the transaction coordinator writes it (through the coordinators' log, on the agent)
        coordinator.agent().call(coordinator, (c, nowMs) ->
        {
            runtime.log().writeMarker(home, producerId, (short)0, 0, true, false, error -> assertEquals(Errors.NONE, error));
            return null;
        });
        await(() ->
        {
            logThreadInvoker.invoke();
            agent.invoke();
            monotonic.advance(TimeUnit.MILLISECONDS.toNanos(CoordinatorAgent.TICK_MS));
            return end(STRAY) == 2;
        }, Duration.ofSeconds(20), "the stray's tombstone");
        final CompletableFuture<Long> committed = coordinator.agent().call(coordinator, (c, nowMs) -> c.committed(GROUP, "orders", 0).offset());
        await(() ->
        {
            agent.invoke();
            return committed.isDone();
        }, Duration.ofSeconds(20), "the agent ran the call");
        assertEquals(7, committed.get(), "the transaction's offset, committed");
        final Map<String, Group> replayed = new HashMap<>();
        assertEquals(Map.of(), GroupReplay.load(topics, replayed, 0).strays());
        assertEquals(Map.of(new Group.TopicPartition("orders", 0), 7L), offsets(replayed), "and so at the next start");
    }

    /** {@code count} group ids whose partition is not STRAY. */
    private static List<String> strayGroups(final int count)
    {
        final List<String> ids = new ArrayList<>();
        for (int i = 0; ids.size() < count; i++)
        {
            if (CoordinatorTopic.partitionFor("g" + i, PARTITIONS) != STRAY)
            {
                ids.add("g" + i);
            }
        }
        return ids;
    }

    private void stepLogThreadUntilAnswered()
    {
        await(() ->
        {
            logThreadInvoker.invoke();
            return logThread.waitingCommands() == 0 && logThread.hasReturned(SENDER);
        }, Duration.ofSeconds(20), "the log thread answered the coordinator's write");
    }

    private long end(final int partition)
    {
        return topics.topic(GroupCoordinator.OFFSETS_TOPIC).partitions[partition].log.logEndOffset();
    }

    private static Map<Group.TopicPartition, Long> offsets(final Map<String, Group> groups)
    {
        final Map<Group.TopicPartition, Long> offsets = new HashMap<>();
        groups.get(GROUP).offsets.forEach((tp, o) -> offsets.put(tp, o.offset()));
        return offsets;
    }

    private static byte[][] offsetRecord(final String group, final int partition, final long committed)
    {
        return new byte[][] {GroupRecords.offsetKey(group, "orders", partition),
            GroupRecords.offsetValue(new Group.Offset(committed, -1, "", 1_700_000_000_000L))};
    }

    private void plant(final byte[][]... records)
    {
        append(topics.topic(GroupCoordinator.OFFSETS_TOPIC).partitions[STRAY].log, -1, records);
    }

    /** Appends the records as one batch, of producer {@code producerId}'s transaction unless -1; this thread is the log's writer. */
    private static void append(final PartitionLog log, final long producerId, final byte[][]... records)
    {
        final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(256);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(batch, 0);
        if (producerId >= 0)
        {
            builder.producer(producerId, (short)0, 0).transactional(true);
        }
        for (final byte[][] record : records)
        {
            builder.appendRecord(1_700_000_000_000L, record[0], record[1]);
        }
        final AppendResult result = new AppendResult();
        log.claimWriter();
        log.append(batch, 0, builder.build(), result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }
}
