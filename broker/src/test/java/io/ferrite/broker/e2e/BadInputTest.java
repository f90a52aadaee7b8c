package io.ferrite.broker.e2e;

import io.ferrite.testing.TeeStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Thousands of bad inputs — random bytes, truncated frames, huge and negative sizes, unknown API keys
 * and versions, valid requests with bytes flipped, cut or inserted — each on its own connection, while
 * a well-behaved producer keeps working. Each costs only its connection: the producer never fails,
 * no connection is left open, the heap does not grow with them, and no connection is logged twice.
 */
class BadInputTest
{
    private static final int CONNECTIONS = 4_000;
    private static final Pattern LOGGED = Pattern.compile("closing connection ([0-9]+) from ");

    @TempDir
    Path dir;

    @Test
    void badInputCostsOnlyItsConnection() throws Exception
    {
        final PrintStream originalErr = System.err;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("victim", 2, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final List<byte[]> valid = validRequests();
            final int port = broker.broker.address().getPort();
            final long heapBefore = usedHeapAfterGc();
            final AtomicInteger answered = new AtomicInteger();
            final AtomicInteger closed = new AtomicInteger();
            final AtomicInteger producedOk = new AtomicInteger();
            System.setErr(new PrintStream(new TeeStream(originalErr, captured), true, StandardCharsets.UTF_8));
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all", "linger.ms", 0)))
            {
                final ExecutorService pool = Executors.newFixedThreadPool(8);
                final List<Future<?>> attacks = new ArrayList<>();
                for (int t = 0; t < 8; t++)
                {
                    final long seed = 1000 + t;
                    attacks.add(pool.submit(() ->
                    {
                        final Random random = new Random(seed);
                        for (int i = 0; i < CONNECTIONS / 8; i++)
                        {
                            final boolean gotAnswer = attack(port, random, valid);
                            (gotAnswer ? answered : closed).incrementAndGet();
                        }
                        return null;
                    }));
                }
                int sent = 0;
                while (!attacks.stream().allMatch(Future::isDone))
                {
                    producer.send(new ProducerRecord<>("victim", ("still serving " + sent++).getBytes(StandardCharsets.UTF_8)))
                        .get(20, TimeUnit.SECONDS);
                    producedOk.incrementAndGet();
                }
                for (final Future<?> f : attacks)
                {
                    f.get();
                }
                pool.shutdown();
                producer.send(new ProducerRecord<>("victim", "after".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
            finally
            {
                System.setErr(originalErr);
            }
            System.out.println("bad input: " + CONNECTIONS + " connections, " + answered.get() + " answered, " + closed.get() +
                " closed by the broker; " + producedOk.get() + " good records produced meanwhile");
            assertTrue(producedOk.get() > 0, "the producer worked during the attack");
            assertTrue(closed.get() > CONNECTIONS / 2, "most bad inputs close their connection: " + closed.get());

            await(() -> broker.broker.openConnections() <= 2, Duration.ofSeconds(20),
                () -> "no more than 2 connections open: " + broker.broker.openConnections());

            final long heapAfter = usedHeapAfterGc();
            System.out.println("heap used: " + heapBefore / 1024 + " KiB before, " + heapAfter / 1024 + " KiB after");
            assertTrue(heapAfter < heapBefore + 64L * 1024 * 1024, "heap grew from " + heapBefore + " to " + heapAfter);

            final Map<String, Integer> perConnection = new HashMap<>();
            final Matcher m = LOGGED.matcher(captured.toString(StandardCharsets.UTF_8));
            while (m.find())
            {
                perConnection.merge(m.group(1), 1, Integer::sum);
            }
            assertTrue(perConnection.size() > CONNECTIONS / 4, "protocol errors are logged: " + perConnection.size());
            perConnection.forEach((remote, n) -> assertEquals(1, n, "log lines for connection " + remote));
        }
    }

    /** One bad input on a fresh connection; true when the broker answered it (a mutation can stay valid). */
    private static boolean attack(final int port, final Random random, final List<byte[]> valid) throws IOException
    {
        final byte[] bytes;
        switch (random.nextInt(6))
        {
            case 0: // random bytes
                bytes = new byte[random.nextInt(300)];
                random.nextBytes(bytes);
                break;
            case 1: // a valid request cut short
            {
                final byte[] v = valid.get(random.nextInt(valid.size()));
                bytes = java.util.Arrays.copyOf(v, random.nextInt(v.length));
                break;
            }
            case 2: // a huge or negative declared size
                bytes = ByteBuffer.allocate(8).putInt(random.nextBoolean() ? 200 << 20 : -1 - random.nextInt(1000))
                    .putInt(random.nextInt()).array();
                break;
            case 3: // an unknown API key or version
            {
                final byte[] v = valid.get(random.nextInt(valid.size())).clone();
                if (random.nextBoolean())
                {
                    v[4] = (byte)(100 + random.nextInt(100));
                }
                else
                {
                    v[6] = 0x7f;
                }
                bytes = v;
                break;
            }
            default: // a valid request with bytes flipped, cut out or inserted (the frame size kept right)
                bytes = mutate(valid.get(random.nextInt(valid.size())), random);
                break;
        }
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(3_000);
            final OutputStream out = socket.getOutputStream();
            out.write(bytes);
            out.flush();
            socket.shutdownOutput();
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            try
            {
                final int size = in.readInt();
                in.readFully(new byte[size]);
                return true;
            }
            catch (final EOFException | SocketTimeoutException | java.net.SocketException ex)
            {
                return false;
            }
        }
    }

    private static byte[] mutate(final byte[] request, final Random random)
    {
        final byte[] body = java.util.Arrays.copyOfRange(request, 4, request.length);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int at = 4 + random.nextInt(Math.max(1, body.length - 4)); // keep the API key and version
        switch (random.nextInt(3))
        {
            case 0:
                for (int i = 0; i < 1 + random.nextInt(4); i++)
                {
                    final int p = 4 + random.nextInt(Math.max(1, body.length - 4));
                    body[p] = (byte)random.nextInt(256);
                }
                out.writeBytes(body);
                break;
            case 1:
                out.write(body, 0, at);
                out.write(body, Math.min(body.length, at + 1 + random.nextInt(8)), Math.max(0, body.length - at - 9));
                break;
            default:
                out.write(body, 0, at);
                final byte[] junk = new byte[1 + random.nextInt(8)];
                random.nextBytes(junk);
                out.writeBytes(junk);
                out.write(body, at, body.length - at);
                break;
        }
        final byte[] mutated = out.toByteArray();
        return ByteBuffer.allocate(4 + mutated.length).putInt(mutated.length).put(mutated).array();
    }

    /** Size-prefixed frames of valid requests to mutate. */
    private static List<byte[]> validRequests()
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < 5; i++)
        {
            builder.append(System.currentTimeMillis(), ("k" + i).getBytes(StandardCharsets.UTF_8), new byte[100]);
        }
        final ProduceRequestData.TopicProduceDataCollection produceTopics = new ProduceRequestData.TopicProduceDataCollection();
        produceTopics.add(new ProduceRequestData.TopicProduceData().setName("victim").setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(1).setRecords(builder.build()))));
        final CreateTopicsRequestData.CreatableTopicCollection create = new CreateTopicsRequestData.CreatableTopicCollection();
        create.add(new CreateTopicsRequestData.CreatableTopic().setName("fuzzed").setNumPartitions(1).setReplicationFactor((short)1));
        final List<byte[]> frames = new ArrayList<>();
        for (final short v : new short[] {3, 8, 9, 12})
        {
            frames.add(frame(ApiKeys.PRODUCE, v, new ProduceRequestData().setAcks((short)1).setTimeoutMs(1000).setTopicData(produceTopics)));
        }
        for (final short v : new short[] {4, 11, 12, 15})
        {
            frames.add(frame(ApiKeys.FETCH, v, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(100).setMinBytes(1)
                .setMaxBytes(1 << 16).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("victim")
                    .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 16)))))));
        }
        frames.add(frame(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(List.of(
            new MetadataRequestData.MetadataRequestTopic().setName("victim")))));
        frames.add(frame(ApiKeys.LIST_OFFSETS, (short)7, new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
            new ListOffsetsRequestData.ListOffsetsTopic().setName("victim").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1)))))));
        frames.add(frame(ApiKeys.CREATE_TOPICS, (short)7, new CreateTopicsRequestData().setTopics(create).setTimeoutMs(1000)));
        return frames;
    }

    private static byte[] frame(final ApiKeys api, final short version, final ApiMessage data)
    {
        return RawClient.frame(api, version, data, 1).array();
    }

    private static long usedHeapAfterGc()
    {
        for (int i = 0; i < 3; i++)
        {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
