package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The produce path (decode, route to the log thread, append, respond) and the fetch path (read,
 * respond, the records copied in or spliced), and ListOffsets and OffsetForLeaderEpoch, allocate nothing on the
 * broker's threads in steady state: measured per thread with {@code ThreadMXBean.getThreadAllocatedBytes}
 * over windows of thousands of requests.
 *
 * <p>A window passes when every broker thread allocated less than {@link #ONE_OFF} bytes in it: less than a byte a
 * request, so any allocation made per request (16 bytes at least) fails every window. Windows are taken from the first
 * request on, up to {@link #WINDOWS}, until one passes, and a failure lists every window's figures. The warm-up is the
 * windows that fail before the JIT has compiled the request path (what escape analysis removes is allocated until
 * then), not a fixed count: a window that passes shows no per-request allocation whether its code ran compiled or not,
 * since compiling removes allocations and adds none. The most rounds taken are the 30 000 of warm-up and 8 windows of
 * 5 000 that the test took before (issue 17's build work); in that work's runs every case passed at its second window
 * (10 000 rounds where 35 000 were taken; the first window holds the first requests' one-offs and code not yet compiled).
 * Why windows: under load (two cores
 * shared by several builds) one measured phase runs for 10-50 s, and what the broker's threads do on timers meanwhile
 * falls into it — the cleaner's pass over the compacted logs every {@code log.cleaner.backoff.ms} (15 s; once
 * {@code __transaction_state}'s compacted partitions exist, on an idle broker: 20 KB at the first pass, 6 KB at each
 * later one, requests or not), the
 * log thread's and the scheduler's periodic duties — which one long window over the whole phase cannot tell from a
 * request's cost. Shorter windows, each long enough that a per-request allocation shows, can.
 */
class RequestPathAllocationTest
{
    /** Requests (rounds) a measured window: {@link #ONE_OFF} bytes over them is under a byte each. */
    private static final int WINDOW = 5_000;
    /** Windows taken at most, from the first request, until one shows every thread under {@link #ONE_OFF}. */
    private static final int WINDOWS = 14;
    /** What a thread may allocate in a window: a stray one-off (a timer's work), never a per-request cost. */
    private static final long ONE_OFF = 4_096;

    @TempDir
    Path dir;

    @Test
    void produceAndFetchAllocateNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            assertAllocatesNothing(broker, "produce + fetch", produceAndFetch());
        }
    }

    /**
     * The same with client quotas set at several levels (the default user, ANONYMOUS with the default client id, the
     * default client id), so that produce and fetch resolve a quota, record into its rate and compute its throttle check
     * on every request: once the connection's resolution is cached, nothing is allocated. The quotas are far above what
     * the test sends, so no answer is throttled (each produce is checked answered with throttle time 0).
     */
    @Test
    void produceAndFetchUnderClientQuotasAllocateNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
                ClientQuotasTest.alter(admin,
                    ClientQuotasTest.set(ClientQuotasTest.entity("user", null), "producer_byte_rate", 1e12),
                    ClientQuotasTest.set(ClientQuotasTest.entity("user", "ANONYMOUS", "client-id", null), "consumer_byte_rate", 1e12),
                    ClientQuotasTest.set(ClientQuotasTest.entity("client-id", null), "producer_byte_rate", 2e12));
            }
            final ByteBuffer[] requests = produceAndFetch();
            assertAllocatesNothing(broker, "produce + fetch under client quotas", round -> requests, (round, i, response) ->
            {
                if (i == 0 && round % 1000 == 0)
                {
                    final ByteBuffer body = response.duplicate().position(0);
                    ResponseHeader.parse(body, ApiKeys.PRODUCE.responseHeaderVersion((short)12));
                    final ProduceResponseData answer = new ProduceResponseData(new ByteBufferAccessor(body), (short)12);
                    assertEquals(0, answer.throttleTimeMs(), "produce " + round);
                    assertEquals(Errors.NONE.code(), answer.responses().iterator().next().partitionResponses().get(0).errorCode());
                }
            });
        }
    }

    /**
     * A transactional produce (v12, transaction version 2) to a partition where its transaction is
     * open: no verification with the coordinator, nothing allocated. One frame per send, built before
     * the first, each batch with the next sequences: the first send opens the transaction (verified:
     * the coordinator adds the partition), every later one is appended inside it — each answered NONE
     * at the next offset (none a duplicate, so the whole append path is measured). The transaction's
     * timeout is the longest allowed, so no abort can come between.
     */
    @Test
    void aTransactionalProduceInsideItsOpenTransactionAllocatesNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            assertTransactionalProduceAllocatesNothing(broker, broker.broker.address().getPort(), channel -> { }, "transactional produce");
        }
    }

    /**
     * The same with the authorizer on, on alice's SASL connection (WRITE on the topic and on the transactional id): once her
     * connection decided the transactional id (cached with its bytes, compared in place), each request's check of it
     * allocates nothing (review L1: the id was read as a new String and asked of the authorizer per request).
     */
    @Test
    void aTransactionalProduceWithTheAuthorizerAllocatesNothingOnTheBrokerThreads() throws Exception
    {
        final Map<String, String> overrides = new java.util.HashMap<>(SaslPlainTest.saslBroker());
        overrides.put("num.network.threads", "1");
        overrides.put("ferrite.log.threads", "1");
        overrides.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        overrides.put("super.users", "User:ANONYMOUS"); // the test's Admin and InitProducerId, on the PLAINTEXT listener
        try (RunningBroker broker = new RunningBroker(dir, overrides))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
                final ResourcePattern topic = new ResourcePattern(ResourceType.TOPIC, "alloc", PatternType.LITERAL);
                final ResourcePattern id = new ResourcePattern(ResourceType.TRANSACTIONAL_ID, "alloc-txn", PatternType.LITERAL);
                admin.createAcls(List.of(new AclBinding(topic, new AccessControlEntry("User:alice", "*", AclOperation.WRITE,
                    AclPermissionType.ALLOW)), new AclBinding(id, new AccessControlEntry("User:alice", "*", AclOperation.WRITE,
                    AclPermissionType.ALLOW)))).all().get(20, TimeUnit.SECONDS);
            }
            assertTransactionalProduceAllocatesNothing(broker, SaslPlainTest.saslPort(broker), RequestPathAllocationTest::authenticate,
                "transactional produce on SASL with ACLs");
        }
    }

    /** Opens transaction {@code alloc-txn} (InitProducerId on the PLAINTEXT listener) and measures its produces on {@code port}. */
    private void assertTransactionalProduceAllocatesNothing(final RunningBroker broker, final int port, final Prelude prelude,
        final String what) throws IOException
    {
        final InitProducerIdResponseData init;
        try (RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            init = new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.INIT_PRODUCER_ID, (short)4,
                new InitProducerIdRequestData().setTransactionalId("alloc-txn").setTransactionTimeoutMs(900_000)
                    .setProducerId(-1).setProducerEpoch((short)-1))), (short)4);
        }
        assertEquals(0, init.errorCode());
        final SimpleRecord[] records = new SimpleRecord[10];
        for (int i = 0; i < records.length; i++)
        {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null, new byte[100]);
        }
        // built before the first send. Built between sends instead, one run (issue 17's build work, machine load 25-53)
        // showed the network thread allocating 16 bytes a request (80 000 a window) in every window from the second;
        // a second run of that variant (its review, load about 10) passed at window 2 (network thread 512 B). One
        // observation, not reproduced: possibly load- or timing-dependent, open, and prebuilt frames would not see it
        final ByteBuffer[] frames = new ByteBuffer[WINDOWS * WINDOW];
        for (int round = 0; round < frames.length; round++)
        {
            final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
            topics.add(new ProduceRequestData.TopicProduceData().setName("alloc").setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withTransactionalRecords(
                    Compression.NONE, init.producerId(), init.producerEpoch(), round * records.length, records)))));
            frames[round] = frame(ApiKeys.PRODUCE, (short)12, new ProduceRequestData().setTransactionalId("alloc-txn")
                .setAcks((short)1).setTimeoutMs(30_000).setTopicData(topics));
        }
        final short version = 12;
        assertAllocatesNothing(broker, port, prelude, what, round -> new ByteBuffer[] {frames[round]}, (round, i, response) ->
        {
            final ByteBuffer body = response.duplicate().position(0); // exchange leaves the response from its header on
            ResponseHeader.parse(body, ApiKeys.PRODUCE.responseHeaderVersion(version));
            final ProduceResponseData.PartitionProduceResponse answer = new ProduceResponseData(new ByteBufferAccessor(body), version)
                .responses().iterator().next().partitionResponses().get(0);
            assertEquals(Errors.NONE.code(), answer.errorCode(), "send " + round);
            assertEquals((long)round * records.length, answer.baseOffset(), "send " + round);
        });
    }

    /**
     * ListOffsets and OffsetForLeaderEpoch, as consumers send them when they start or validate a
     * position after a metadata change: the walk they share (PartitionOffsetsHandler), its lookups
     * through method references, and each API's answer allocate nothing on the broker's threads.
     */
    @Test
    void listOffsetsAndOffsetForLeaderEpochAllocateNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 2, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final ListOffsetsRequestData.ListOffsetsTopic offsetsTopic = new ListOffsetsRequestData.ListOffsetsTopic().setName("alloc");
            final OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection epochTopics =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
            final OffsetForLeaderEpochRequestData.OffsetForLeaderTopic epochTopic =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("alloc");
            // partition 2 does not exist: the not-found answer is measured too
            for (int p = 0; p < 3; p++)
            {
                offsetsTopic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(p)
                    .setTimestamp(p == 0 ? -1 : -2)); // LATEST, EARLIEST
                epochTopic.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(p)
                    .setLeaderEpoch(0));
            }
            epochTopics.add(epochTopic);
            final ByteBuffer listOffsets = frame(ApiKeys.LIST_OFFSETS, (short)9, new ListOffsetsRequestData().setReplicaId(-1)
                .setTopics(List.of(offsetsTopic)));
            final ByteBuffer offsetForLeaderEpoch = frame(ApiKeys.OFFSET_FOR_LEADER_EPOCH, (short)4,
                new OffsetForLeaderEpochRequestData().setReplicaId(-1).setTopics(epochTopics));
            assertAllocatesNothing(broker, "ListOffsets + OffsetForLeaderEpoch", listOffsets, offsetForLeaderEpoch);
        }
    }

    /**
     * A follower's fetches checked against the leader-epoch cache ({@code FetchDivergence}): led in epoch 3 with replicas
     * {1, 2}, one record; replica 2 (v17, replica_state) fetches consistently (last fetched epoch 3), with an epoch the
     * leader never had (2: answered diverging_epoch {2, 0}) and with one newer than it knows (5: OFFSET_OUT_OF_RANGE).
     */
    @Test
    void aFollowersFetchCheckedAgainstTheEpochCacheAllocatesNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            final org.apache.kafka.common.Uuid topicId;
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
                topicId = admin.describeTopics(List.of("alloc")).allTopicNames().get().get("alloc").topicId();
            }
            broker.broker.leadership().leadWithoutController("alloc", 0, 3, new int[] {1, 2}, new int[] {1},
                (topic, partition, leaderEpoch, isr) -> { }).get(20, TimeUnit.SECONDS);
            try (var producer = broker.producer(Map.of(org.apache.kafka.clients.producer.ProducerConfig.ACKS_CONFIG, "1")))
            {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("alloc", 0, null, new byte[10])).get(20, TimeUnit.SECONDS);
            }
            final int[][] lastFetchedEpochs = {{3, 1}, {2, 1}, {5, 1}};
            final ByteBuffer[] fetches = new ByteBuffer[lastFetchedEpochs.length];
            for (int i = 0; i < fetches.length; i++)
            {
                final FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                    .setSessionId(0).setSessionEpoch(-1).setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(2));
                data.topics().add(new FetchRequestData.FetchTopic().setTopicId(topicId).setPartitions(List.of(
                    new FetchRequestData.FetchPartition().setPartition(0).setCurrentLeaderEpoch(3)
                        .setFetchOffset(lastFetchedEpochs[i][1]).setLastFetchedEpoch(lastFetchedEpochs[i][0]).setPartitionMaxBytes(1 << 20))));
                fetches[i] = frame(ApiKeys.FETCH, (short)17, data);
            }
            assertAllocatesNothing(broker, "replica Fetch with last_fetched_epoch", round -> fetches, (round, i, response) ->
            {
                if (round % 1000 == 0)
                {
                    final ByteBuffer body = response.duplicate().position(0); // exchange leaves the response from its header on
                    ResponseHeader.parse(body, ApiKeys.FETCH.responseHeaderVersion((short)17));
                    final var p = new org.apache.kafka.common.message.FetchResponseData(new ByteBufferAccessor(body), (short)17)
                        .responses().get(0).partitions().get(0);
                    assertEquals(i == 2 ? Errors.OFFSET_OUT_OF_RANGE : Errors.NONE, Errors.forCode(p.errorCode()));
                    assertEquals(i == 1 ? 2 : -1, p.divergingEpoch().epoch());
                    assertEquals(i == 1 ? 0 : -1, p.divergingEpoch().endOffset());
                }
            });
        }
    }

    /** A produce of 10 records to alloc-0, a fetch of 16 KiB (copied in) and one of 64 KiB (spliced from the file). */
    static ByteBuffer[] produceAndFetch()
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < 10; i++)
        {
            builder.append(System.currentTimeMillis(), null, new byte[100]);
        }
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName("alloc").setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(builder.build()))));
        final ByteBuffer produce = frame(ApiKeys.PRODUCE, (short)12, new ProduceRequestData().setAcks((short)1)
            .setTimeoutMs(30_000).setTopicData(topics));
        final ByteBuffer fetch = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0)
            .setMinBytes(0).setMaxBytes(16 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                .setTopic("alloc").setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                .setFetchOffset(0).setPartitionMaxBytes(16 * 1024))))));
        // 64 KiB: a region above the copying threshold (32 KiB), sent from the file with transferTo (16 KiB is copied in)
        final ByteBuffer fetchSpliced = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0)
            .setMinBytes(0).setMaxBytes(64 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                .setTopic("alloc").setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                .setFetchOffset(0).setPartitionMaxBytes(64 * 1024))))));
        return new ByteBuffer[] {produce, fetch, fetchSpliced};
    }

    /**
     * The same on a connection of a SASL_PLAINTEXT listener once it authenticated with PLAIN: authentication leaves
     * nothing on the request path (the connection's gate is gone), so the produce and fetch paths still allocate nothing.
     */
    @Test
    void produceAndFetchOnAnAuthenticatedSaslConnectionAllocateNothingOnTheBrokerThreads() throws Exception
    {
        final Map<String, String> overrides = new java.util.HashMap<>(SaslPlainTest.saslBroker());
        overrides.put("num.network.threads", "1");
        overrides.put("ferrite.log.threads", "1");
        try (RunningBroker broker = new RunningBroker(dir, overrides))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final ByteBuffer[] requests = produceAndFetch();
            assertAllocatesNothing(broker, SaslPlainTest.saslPort(broker), RequestPathAllocationTest::authenticate,
                "produce + fetch on SASL", round -> requests, (round, i, response) -> { });
        }
    }

    /**
     * The same with the authorizer on and alice given WRITE and READ on the topic: once her connection's decisions are
     * cached (the warm-up rounds), checking them allocates nothing. Each produce is checked answered NONE, so a refusal
     * (TOPIC_AUTHORIZATION_FAILED, which allocates nothing either) cannot pass for the allowed path.
     */
    @Test
    void produceAndFetchWithTheAuthorizerAndAclsAllocateNothingOnTheBrokerThreads() throws Exception
    {
        final Map<String, String> overrides = new java.util.HashMap<>(SaslPlainTest.saslBroker());
        overrides.put("num.network.threads", "1");
        overrides.put("ferrite.log.threads", "1");
        overrides.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        overrides.put("super.users", "User:ANONYMOUS"); // the test's Admin, on the PLAINTEXT listener
        try (RunningBroker broker = new RunningBroker(dir, overrides))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
                final ResourcePattern topic = new ResourcePattern(ResourceType.TOPIC, "alloc", PatternType.LITERAL);
                admin.createAcls(List.of(new AclBinding(topic, new AccessControlEntry("User:alice", "*", AclOperation.WRITE,
                    AclPermissionType.ALLOW)), new AclBinding(topic, new AccessControlEntry("User:alice", "*", AclOperation.READ,
                    AclPermissionType.ALLOW)))).all().get(20, TimeUnit.SECONDS);
            }
            final ByteBuffer[] requests = produceAndFetch();
            assertAllocatesNothing(broker, SaslPlainTest.saslPort(broker), RequestPathAllocationTest::authenticate,
                "produce + fetch on SASL with ACLs", round -> requests, (round, i, response) ->
                {
                    if (i == 0)
                    {
                        final ByteBuffer body = response.duplicate().position(0);
                        ResponseHeader.parse(body, ApiKeys.PRODUCE.responseHeaderVersion((short)12));
                        assertEquals(Errors.NONE.code(), new ProduceResponseData(new ByteBufferAccessor(body), (short)12)
                            .responses().iterator().next().partitionResponses().get(0).errorCode(), "produce " + round);
                    }
                });
        }
    }

    /** SaslHandshake v1 (PLAIN) and SaslAuthenticate v2 as alice, both answered NONE. */
    private static void authenticate(final SocketChannel channel) throws IOException
    {
        final ByteBuffer response = ByteBuffer.allocate(4096);
        exchange(channel, frame(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN")), response);
        exchange(channel, frame(ApiKeys.SASL_AUTHENTICATE, (short)2, new SaslAuthenticateRequestData()
            .setAuthBytes("\0alice\0alice-secret".getBytes(java.nio.charset.StandardCharsets.UTF_8))), response);
        final ByteBuffer body = response.duplicate().position(0);
        ResponseHeader.parse(body, ApiKeys.SASL_AUTHENTICATE.responseHeaderVersion((short)2));
        assertEquals(Errors.NONE.code(), new SaslAuthenticateResponseData(new ByteBufferAccessor(body), (short)2).errorCode());
    }

    /**
     * The same on a connection authenticated with SCRAM-SHA-512 (kafka-clients' own SCRAM client): the SCRAM exchange
     * leaves nothing on the request path either.
     */
    @Test
    void produceAndFetchOnAScramAuthenticatedConnectionAllocateNothingOnTheBrokerThreads() throws Exception
    {
        final Map<String, String> overrides = new java.util.HashMap<>(SaslScramTest.scramBroker());
        overrides.put("num.network.threads", "1");
        overrides.put("ferrite.log.threads", "1");
        try (RunningBroker broker = new RunningBroker(dir, overrides))
        {
            SaslScramTest.setCredential(broker, "alice", org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512, 4096, "alice-secret");
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final ByteBuffer[] requests = produceAndFetch();
            assertAllocatesNothing(broker, SaslPlainTest.saslPort(broker), RequestPathAllocationTest::authenticateScram,
                "produce + fetch on SCRAM", round -> requests, (round, i, response) -> { });
        }
    }

    /** SaslHandshake v1 (SCRAM-SHA-512) and two SaslAuthenticate v2 as alice, answered NONE, the server's signature checked. */
    private static void authenticateScram(final SocketChannel channel) throws IOException
    {
        final ByteBuffer response = ByteBuffer.allocate(4096);
        exchange(channel, frame(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512")), response);
        final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-512", "alice", "alice-secret");
        byte[] challenge = new byte[0];
        for (int step = 0; step < 2; step++)
        {
            exchange(channel, frame(ApiKeys.SASL_AUTHENTICATE, (short)2, new SaslAuthenticateRequestData().setAuthBytes(client.next(challenge))),
                response);
            final ByteBuffer body = response.duplicate().position(0);
            ResponseHeader.parse(body, ApiKeys.SASL_AUTHENTICATE.responseHeaderVersion((short)2));
            final SaslAuthenticateResponseData answer = new SaslAuthenticateResponseData(new ByteBufferAccessor(body), (short)2);
            assertEquals(Errors.NONE.code(), answer.errorCode(), answer.errorMessage());
            challenge = answer.authBytes();
        }
        client.next(challenge);
        assertTrue(client.complete());
    }

    /** What a connection does before its measured requests. */
    @FunctionalInterface
    private interface Prelude
    {
        void run(SocketChannel channel) throws IOException;
    }

    /** The requests of one round, in turn. */
    @FunctionalInterface
    private interface Rounds
    {
        ByteBuffer[] requests(int round);
    }

    /** A check of the answer (its header and body, as {@link #exchange} leaves it) to the {@code i}-th request of a round. */
    @FunctionalInterface
    private interface Answered
    {
        void check(int round, int i, ByteBuffer response);
    }

    /** Sends the requests in turn in measured windows from the first on, and checks what the broker's threads allocated. */
    private static void assertAllocatesNothing(final RunningBroker broker, final String what, final ByteBuffer... requests)
        throws IOException
    {
        assertAllocatesNothing(broker, what, round -> requests, (round, i, response) -> { });
    }

    private static void assertAllocatesNothing(final RunningBroker broker, final String what, final Rounds rounds,
        final Answered answered) throws IOException
    {
        assertAllocatesNothing(broker, broker.broker.address().getPort(), channel -> { }, what, rounds, answered);
    }

    /**
     * As above, each round's requests given by {@code rounds} (0 to WINDOWS * WINDOW - 1) and each answer checked:
     * windows of {@link #WINDOW} rounds from the first until one in which every broker thread allocated under {@link #ONE_OFF}
     * bytes.
     */
    private static void assertAllocatesNothing(final RunningBroker broker, final int port, final Prelude prelude, final String what,
        final Rounds rounds, final Answered answered) throws IOException
    {
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port)))
        {
            prelude.run(channel);
            final ByteBuffer response = ByteBuffer.allocateDirect(1 << 20);
            int round = 0;
            final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final List<Thread> brokerThreads = new ArrayList<>();
            for (final Thread t : Thread.getAllStackTraces().keySet())
            {
                if (t.getName().startsWith("ferrite-network-") || t.getName().startsWith("ferrite-log-"))
                {
                    brokerThreads.add(t);
                }
            }
            assertTrue(brokerThreads.stream().anyMatch(t -> t.getName().startsWith("ferrite-network-")));
            final long[] before = new long[brokerThreads.size()];
            final StringBuilder windows = new StringBuilder();
            for (int window = 1; window <= WINDOWS; window++)
            {
                for (int i = 0; i < before.length; i++)
                {
                    before[i] = threads.getThreadAllocatedBytes(brokerThreads.get(i).getId());
                }
                for (final int end = round + WINDOW; round < end; round++)
                {
                    exchangeRound(channel, rounds, answered, round, response);
                }
                boolean steady = true;
                windows.append("\n  window ").append(window).append(':');
                for (int i = 0; i < before.length; i++)
                {
                    final long allocated = threads.getThreadAllocatedBytes(brokerThreads.get(i).getId()) - before[i];
                    windows.append(' ').append(brokerThreads.get(i).getName()).append(' ').append(allocated);
                    steady &= allocated < ONE_OFF;
                }
                if (steady)
                {
                    System.out.println(what + ": bytes allocated per thread over windows of " + WINDOW + " rounds" + windows);
                    return;
                }
            }
            fail(what + ": no window of " + WINDOW + " rounds in which every broker thread allocated under " + ONE_OFF
                + " bytes (a per-request allocation, or a periodic one in every window); bytes per thread:" + windows);
        }
    }

    private static void exchangeRound(final SocketChannel channel, final Rounds rounds, final Answered answered, final int round,
        final ByteBuffer response) throws IOException
    {
        final ByteBuffer[] requests = rounds.requests(round);
        for (int i = 0; i < requests.length; i++)
        {
            exchange(channel, requests[i], response);
            answered.check(round, i, response);
        }
    }

    private static void exchange(final SocketChannel channel, final ByteBuffer request, final ByteBuffer response) throws IOException
    {
        request.clear();
        while (request.hasRemaining())
        {
            channel.write(request);
        }
        response.clear().limit(4);
        while (response.hasRemaining())
        {
            if (channel.read(response) < 0)
            {
                throw new IOException("closed");
            }
        }
        response.clear().limit(response.getInt(0));
        while (response.hasRemaining())
        {
            if (channel.read(response) < 0)
            {
                throw new IOException("closed");
            }
        }
    }

    private static ByteBuffer frame(final ApiKeys api, final short version, final ApiMessage data)
    {
        final ByteBuffer heap = RawClient.frame(api, version, data, 1);
        return ByteBuffer.allocateDirect(heap.capacity()).put(heap);
    }
}
