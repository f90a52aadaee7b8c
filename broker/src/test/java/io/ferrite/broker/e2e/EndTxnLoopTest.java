package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.txn.EndTxnTiming;
import io.ferrite.log.PartitionLog;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transactional producer without kafka-clients' producer: a raw-protocol loop of InitProducerId, then N
 * transactions of one Produce of 100 records of 1 KiB and an EndTxn commit, each request's round trip timed
 * into an HdrHistogram and printed (with the broker's own stages when it runs with
 * {@code -Dferrite.txn.endTxnTiming=true}, see {@link EndTxnTiming}), and the process's page faults over
 * the loop. {@code -Dferrite.endTxnLoop.version} picks the exchange:
 * <ul>
 *   <li>2 (the default): transaction version 2, what kafka-clients 4.4 (the side-by-side runner's) does with
 *   Ferrite since it advertises transaction.version 2 — Produce v12 with the transactional id and no
 *   AddPartitionsToTxn (the broker verifies and adds the partition on the coordinators' agent, holding it while
 *   the previous transaction's markers are written), then EndTxn v5, whose answer carries the bumped epoch the
 *   next transaction produces with (its sequence from 0);</li>
 *   <li>1: transaction version 1 — AddPartitionsToTxn v3, Produce v11, EndTxn v4, one epoch throughout.</li>
 * </ul>
 * What it asserts is that every request is answered NONE (an add or a produce that meets
 * CONCURRENT_TRANSACTIONS — the last commit's markers still being written: at once for AddPartitionsToTxn v3,
 * as Kafka 4.4 answers it, after the broker's hold for a produce v12 — is sent again, as kafka-clients does,
 * and counted) and that the partition ends with every transaction committed (the last
 * stable offset at the log end); with the timing on (the surefire execution {@code end-txn-timing} runs it
 * so), that every stage recorded one sample per counted EndTxn. The figures are printed only (no timing
 * assertion). {@code -Dferrite.endTxnLoop.transactions} (default 300) and {@code -Dferrite.endTxnLoop.rate}
 * (transactions per second; 0, the default, unpaced) size the run; a tenth as many go first, uncounted.
 */
class EndTxnLoopTest
{
    private static final int RECORDS = 100;
    private static final byte[] VALUE = new byte[1024];

    @TempDir
    Path dir;

    @Test
    void everyCommitIsAnsweredAndTheTransactionsAllEndCommitted() throws Exception
    {
        final int transactions = Integer.getInteger("ferrite.endTxnLoop.transactions", 300);
        final int rate = Integer.getInteger("ferrite.endTxnLoop.rate", 0);
        final int warmUp = Math.max(1, transactions / 10);
        final String id = "loop";
        final String idle = System.getProperty("ferrite.endTxnLoop.idle");
        try (RunningBroker broker = new RunningBroker(dir, idle == null ? Map.of() : Map.of(BrokerConfig.IDLE_STRATEGY, idle)); Admin admin = broker.admin(); RawClient raw = new RawClient(
            broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(id, 1, (short)1))).all().get();
            final InitProducerIdResponseData init = ProduceVerificationTest.init(raw, id);
            final int version = Integer.getInteger("ferrite.endTxnLoop.version", 2);
            assertTrue(version == 1 || version == 2, "ferrite.endTxnLoop.version 1 or 2, not " + version);
            final short produceVersion = (short)(version == 2 ? 12 : 11);
            final short endVersion = (short)(version == 2 ? 5 : 4);
            long pid = init.producerId();
            short epoch = init.producerEpoch();
            final Histogram end = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            final Histogram add = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            final Histogram produce = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            final long periodNs = rate > 0 ? TimeUnit.SECONDS.toNanos(1) / rate : 0;
            long faultsAtStart = 0;
            long next = System.nanoTime();
            int sequence = 0;
            int retries = 0;
            for (int t = 0; t < warmUp + transactions; t++)
            {
                if (t == warmUp)
                {
                    EndTxnTiming.reset();
                    faultsAtStart = minorFaults();
                }
                if (periodNs > 0)
                {
                    next += periodNs;
                    for (long wait; (wait = next - System.nanoTime()) > 0; )
                    {
                        LockSupport.parkNanos(wait);
                    }
                }
                final boolean counted = t >= warmUp;
                long start = System.nanoTime();
                if (version == 1)
                {
                    short addError;
                    while ((addError = addPartition(raw, id, pid, epoch)) == Errors.CONCURRENT_TRANSACTIONS.code())
                    {
                        // the last commit's markers are still being written (answered at once, as Kafka): kafka-clients sends it again
                        retries++;
                        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "AddPartitionsToTxn CONCURRENT_TRANSACTIONS for 20 s");
                    }
                    record(counted, add, start);
                    assertEquals(Errors.NONE.code(), addError, "AddPartitionsToTxn of transaction " + t);
                    start = System.nanoTime();
                }
                String produced;
                while ((produced = ProduceVerificationTest.produceError(raw.exchange(ApiKeys.PRODUCE, produceVersion,
                    produceRequest(id, pid, epoch, sequence)), produceVersion)).equals(Errors.CONCURRENT_TRANSACTIONS.name()))
                {
                    // transaction version 2: the broker's add of the partition outlasted its hold, as above
                    retries++;
                    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "Produce CONCURRENT_TRANSACTIONS for 20 s");
                }
                record(counted, produce, start);
                assertEquals("NONE", produced, "the produce of transaction " + t);
                sequence += RECORDS;
                start = System.nanoTime();
                final EndTxnResponseData ended = new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, endVersion,
                    new EndTxnRequestData().setTransactionalId(id).setProducerId(pid).setProducerEpoch(epoch).setCommitted(true))), endVersion);
                record(counted, end, start);
                assertEquals(Errors.NONE.code(), ended.errorCode(), "EndTxn of transaction " + t);
                if (version == 2)
                {
                    assertTrue(ended.producerEpoch() > epoch || ended.producerId() != pid, "EndTxn v5 bumps the epoch");
                    pid = ended.producerId();
                    epoch = ended.producerEpoch();
                    sequence = 0;
                }
            }
            final long faults = minorFaults() - faultsAtStart;
            final PartitionLog log = broker.broker.topics().topic(id).partitions[0].log;
            final long expectedEnd = (long)(warmUp + transactions) * (RECORDS + 1); // each transaction's records and its marker
            await(() -> log.logEndOffset() == expectedEnd && log.transactions().lastStableOffset() == expectedEnd, Duration.ofSeconds(20),
                "every transaction's marker written and the last stable offset at the log end");
            System.out.printf("EndTxnLoop: %d transactions of %d x 1 KiB (transaction version %d, %s), after %d uncounted%n",
                transactions, RECORDS, version, rate > 0 ? rate + " txn/s" : "unpaced", warmUp);
            if (version == 1)
            {
                print("AddPartitionsToTxn", add);
            }
            print("Produce", produce);
            print("EndTxn", end);
            System.out.printf("  %s answered CONCURRENT_TRANSACTIONS and sent again: %d times%n", version == 1 ? "AddPartitionsToTxn"
                : "Produce", retries);
            System.out.printf("  process minor page faults: %d (%.1f a transaction)%n", faults, faults / (double)transactions);
            System.out.println(EndTxnTiming.report());
            if (EndTxnTiming.ENABLED)
            {
                everyStageCounted(transactions);
            }
        }
    }

    /**
     * With the timing on: one sample per counted EndTxn in each request stage, none answered without a write,
     * and the markers and Complete* of all but perhaps the last (still completing) — counts, not times.
     */
    private static void everyStageCounted(final int transactions)
    {
        assertEquals(0, EndTxnTiming.count("unwritten"), "EndTxns answered without a write");
        for (final String stage : List.of("queued", "to_log", "append", "return", "respond", "total"))
        {
            assertEquals(transactions, EndTxnTiming.count(stage), "samples of stage " + stage);
        }
        for (final String stage : List.of("markers", "complete"))
        {
            final long n = EndTxnTiming.count(stage);
            assertTrue(n >= transactions - 1 && n <= transactions + 1, "samples of stage " + stage + ": " + n);
        }
    }

    private static void record(final boolean counted, final Histogram h, final long startNs)
    {
        if (counted)
        {
            h.recordValue(Math.min(TimeUnit.SECONDS.toMicros(60), (System.nanoTime() - startNs) / 1000));
        }
    }

    private static void print(final String what, final Histogram h)
    {
        System.out.printf("  %-18s us: n=%d p50=%d p90=%d p99=%d p99.9=%d max=%d%n", what, h.getTotalCount(), h.getValueAtPercentile(50),
            h.getValueAtPercentile(90), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue());
    }

    /** The process's minor page faults so far (field 10 of /proc/self/stat), or 0 where there is none. */
    private static long minorFaults() throws java.io.IOException
    {
        final Path stat = Path.of("/proc/self/stat");
        if (!Files.exists(stat))
        {
            return 0;
        }
        final String s = Files.readString(stat);
        final String[] fields = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]); // field 10 overall; fields here start at field 3 (state)
    }

    /** AddPartitionsToTxn v3 of partition 0 of topic {@code id}; returns the partition's error. */
    private static short addPartition(final RawClient raw, final String id, final long pid, final short epoch) throws java.io.IOException
    {
        final AddPartitionsToTxnResponseData added = new AddPartitionsToTxnResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.ADD_PARTITIONS_TO_TXN, (short)3, addPartition(id, pid, epoch))), (short)3);
        return added.resultsByTopicV3AndBelow().iterator().next().resultsByPartition().iterator().next().partitionErrorCode();
    }

    private static AddPartitionsToTxnRequestData addPartition(final String id, final long pid, final short epoch)
    {
        final AddPartitionsToTxnRequestData add = new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(id)
            .setV3AndBelowProducerId(pid).setV3AndBelowProducerEpoch(epoch);
        add.v3AndBelowTopics().add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(id).setPartitions(List.of(0)));
        return add;
    }

    private static ProduceRequestData produceRequest(final String id, final long pid, final short epoch, final int sequence)
    {
        final SimpleRecord[] records = new SimpleRecord[RECORDS];
        for (int i = 0; i < RECORDS; i++)
        {
            records[i] = new SimpleRecord(VALUE);
        }
        final MemoryRecords batch = MemoryRecords.withTransactionalRecords(Compression.NONE, pid, epoch, sequence, records);
        final ProduceRequestData request = new ProduceRequestData().setTransactionalId(id).setAcks((short)-1).setTimeoutMs(30_000);
        request.topicData().add(new ProduceRequestData.TopicProduceData().setName(id).setPartitionData(new ArrayList<>(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(batch)))));
        return request;
    }
}
