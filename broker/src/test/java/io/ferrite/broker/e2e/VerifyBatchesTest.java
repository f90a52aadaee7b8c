package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.e2e.ProxiedBroker.Open;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.NodeRequests;
import io.ferrite.broker.txn.RemoteVerifier;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A partition leader's produce verifications go to the transactional id's coordinator node batched as Kafka 4.4's
 * AddPartitionsToTxnManager sends them (issue 14): one AddPartitionsToTxn v5 carries every question queued for that node
 * when its lane takes the first (many transactional ids, each answered on its own), one request in flight per node; two
 * questions of one id go in two requests, and only the second of them waits. A real broker stands in for the
 * coordinator's node behind a {@link GatedProxy} ({@link ProxiedBroker}), which holds the first request so that the
 * others are certainly queued meanwhile; the requests are counted by the proxy and by the broker's request metrics.
 */
class VerifyBatchesTest
{
    private static final String TOPIC = "batched-verifications";

    @TempDir
    Path dir;

    /**
     * Also review L1: verified-1's second question cannot share the request with its first, so it waits for the next one
     * alone; verified-4's, queued behind it, joins the first one (before the fix it waited with verified-1's second).
     */
    @Test
    void theQuestionsQueuedForACoordinatorNodeGoInOneRequestEachTransactionAnsweredOnItsOwn() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, 2, Map.of()))
        {
            final RemoteVerifier verifier = verifier(node);
            final Open[] open = new Open[5];
            for (int t = 0; t < open.length; t++)
            {
                open[t] = node.openTransaction("verified-" + t, 1); // partition 0 in each
            }
            final long before = node.received(ApiKeys.ADD_PARTITIONS_TO_TXN);

            final TxnVerifier.Verification held = ask(verifier, open[0], false, 0);
            node.awaitAtProxy(1, "the first question");
            final TxnVerifier.Verification one = ask(verifier, open[1], false, 0);
            final TxnVerifier.Verification two = ask(verifier, open[2], false, 0, 1);
            final TxnVerifier.Verification added = ask(verifier, open[3], true, 1);
            final TxnVerifier.Verification oneAgain = ask(verifier, open[1], false, 1);
            final TxnVerifier.Verification behind = ask(verifier, open[4], false, 0);
            node.proxy.pass(2);
            for (final TxnVerifier.Verification v : List.of(held, one, two, added, behind))
            {
                Await.await(v::done, Duration.ofSeconds(60), "the coordinator's answer");
            }
            // before the fix verified-4's question waited in the third request, held at the proxy until it timed out
            assertEquals(Errors.NONE, behind.error(0), "partition 0 is in verified-4's transaction");
            node.awaitAtProxy(3, "verified-1's second question");
            assertFalse(oneAgain.done(), "verified-1's second question is held at the proxy");
            node.proxy.pass(1);
            Await.await(oneAgain::done, Duration.ofSeconds(60), "the coordinator's answer");
            assertEquals(Errors.NONE, held.error(0));
            assertEquals(Errors.NONE, one.error(0), "partition 0 is in verified-1's transaction");
            assertEquals(Errors.NONE, two.error(0), "partition 0 is in verified-2's transaction");
            assertEquals(Errors.TRANSACTION_ABORTABLE, two.error(1), "partition 1 is not (verify only adds nothing)");
            assertEquals(Errors.NONE, added.error(0), "partition 1 added to verified-3's transaction (transaction version 2)");
            assertEquals(Errors.TRANSACTION_ABORTABLE, oneAgain.error(0), "partition 1 is not in verified-1's transaction");
            assertEquals(3, node.proxy.requests(), "the held question; verified-1, 2, 3 and 4 in one; verified-1's second in the next");
            assertEquals(3, node.received(ApiKeys.ADD_PARTITIONS_TO_TXN) - before, "AddPartitionsToTxn requests the coordinator's node received");

            node.proxy.pass(1);
            final TxnVerifier.Verification after = ask(verifier, open[3], false, 1);
            Await.await(after::done, Duration.ofSeconds(60), "the coordinator's answer");
            assertEquals(Errors.NONE, after.error(0), "partition 1 in verified-3's transaction after the add");
        }
    }

    /**
     * Review M2: a question too large for the lane's frame (20 000 partitions, some 80 KB encoded) fails alone; the
     * connection is kept, and the question queued behind it is sent and answered (it failed NETWORK_EXCEPTION with it).
     */
    @Test
    void aQuestionTooLargeForTheFrameFailsAloneAndTheOneBehindItIsAnswered() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, 2, Map.of()))
        {
            final List<TxnVerifier.Verification> asked = heldThen(node, "sized", (verifier, txn) -> ask(verifier, txn, false,
                new int[20_000]), 3);
            assertEquals(Errors.NONE, asked.get(0).error(0));
            assertEquals(Errors.NETWORK_EXCEPTION, asked.get(1).error(0), "not sent: larger than a request frame");
            assertEquals(Errors.NONE, asked.get(2).error(0), "partition 0 is in sized-2's transaction");
            assertEquals(2, node.proxy.requests(), "the held question, then the small one (the huge one never sent)");
        }
    }

    /**
     * Review L5: a question about 200 partitions of one topic with a 200-character name is some 1.5 KB of request and 2 KB
     * of answer, estimated at 2.9 KB: the question queued behind it shares its request. Before, its topic's name was
     * counted once per partition (125 KB, over the request's budget of 63.5 KB), and the question behind it waited for
     * another request.
     */
    @Test
    void aQuestionAboutManyPartitionsOfALongNamedTopicSharesItsRequest() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, 2, Map.of()))
        {
            final String[] topics = new String[200];
            Arrays.fill(topics, "t".repeat(200)); // no such topic: each of its partitions is UNKNOWN_TOPIC_OR_PARTITION
            final List<TxnVerifier.Verification> asked = heldThen(node, "wide", (verifier, txn) -> verifier.verify(txn.id(),
                txn.producerId(), txn.epoch(), topics, IntStream.range(0, 200).toArray(), 200, false, () -> { }), 2);
            assertEquals(Errors.NONE, asked.get(0).error(0));
            for (int i = 0; i < 200; i++)
            {
                assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, asked.get(1).error(i), "partition " + i + " of a topic that does not exist");
            }
            assertEquals(Errors.NONE, asked.get(2).error(0), "partition 0 is in wide-2's transaction");
            assertEquals(2, node.proxy.requests(), "the held question, then the wide and the small one together");
        }
    }

    /**
     * Three transactions left open, {@code prefix-0} to {@code -2}, each on partition 0, and their questions: the first's
     * about partition 0, held at the proxy; then {@code second} of the second; then the third's about partition 0. The
     * proxy lets {@code passes} requests through; returns the three once each is answered (or failed).
     */
    private static List<TxnVerifier.Verification> heldThen(final ProxiedBroker node, final String prefix,
        final BiFunction<RemoteVerifier, Open, TxnVerifier.Verification> second, final int passes) throws Exception
    {
        final RemoteVerifier verifier = verifier(node);
        final Open[] open = new Open[3];
        for (int t = 0; t < open.length; t++)
        {
            open[t] = node.openTransaction(prefix + "-" + t, 1);
        }
        final TxnVerifier.Verification held = ask(verifier, open[0], false, 0);
        node.awaitAtProxy(1, "the first question");
        final List<TxnVerifier.Verification> asked = List.of(held, second.apply(verifier, open[1]), ask(verifier, open[2], false, 0));
        node.proxy.pass(passes);
        for (final TxnVerifier.Verification v : asked)
        {
            Await.await(v::done, Duration.ofSeconds(60), "answered or failed");
        }
        return asked;
    }

    /** A verifier that asks {@code node}, through its proxy, about every transactional id; closed with it. */
    private static RemoteVerifier verifier(final ProxiedBroker node)
    {
        final PartitionOwnership.Located coordinator = node.behindProxy();
        return node.closing(new RemoteVerifier(ProxiedBroker.NOT_HERE, id -> coordinator, 1,
            new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "verify-batches-test", 64 * 1024)));
    }

    /** A produce's question of {@code txn} about {@code partitions} of the topic: verify only, or an add. */
    private static TxnVerifier.Verification ask(final RemoteVerifier verifier, final Open txn, final boolean add,
        final int... partitions)
    {
        final String[] topics = new String[partitions.length];
        Arrays.fill(topics, TOPIC);
        return verifier.verify(txn.id(), txn.producerId(), txn.epoch(), topics, partitions, partitions.length, add, () -> { });
    }
}
