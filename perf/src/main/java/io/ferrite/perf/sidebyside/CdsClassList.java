package io.ferrite.perf.sidebyside;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Writes the class list the broker's build turns into its class-data archive
 * ({@code broker/src/main/cds/ferrite-broker.classlist}; {@code perf/bin/cds-classlist} runs this):
 * a Ferrite broker started from its runnable jar with {@code -XX:DumpLoadedClassList}, driven
 * through what a new user's clients do first — create topics, produce with every acks setting and
 * codec, idempotently, consume in a group and commit, describe, list offsets, delete — then
 * stopped cleanly. A class of a later build missing from the list is only loaded as before; one
 * listed but gone is skipped by the dump.
 */
public final class CdsClassList
{
    private CdsClassList()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path out = Path.of(args.length > 0 ? args[0] : "broker/src/main/cds/ferrite-broker.classlist").toAbsolutePath();
        if (BrokerProcess.ferriteJar() == null)
        {
            throw new IllegalStateException("no broker/target/ferrite-broker.jar: build the broker first");
        }
        final Path list = Files.createTempFile("ferrite-classes", ".classlist");
        final BrokerProcess broker = BrokerProcess.start(BrokerProcess.Kind.FERRITE, "1g", System.getProperty("java.class.path"),
            List.of(), List.of("-XX:DumpLoadedClassList=" + list));
        try
        {
            drive(broker.bootstrap());
        }
        finally
        {
            broker.stopCleanly(60);
        }
        final long lines = Files.lines(list).count();
        if (broker.process.exitValue() != 0 || lines < 1000)
        {
            throw new IllegalStateException("the broker exited with " + broker.process.exitValue() + " after listing " + lines
                + " classes; its log: " + broker.dir.resolve("broker.log"));
        }
        Files.createDirectories(out.getParent());
        Files.move(list, out, StandardCopyOption.REPLACE_EXISTING);
        broker.close();
        System.out.println(lines + " classes listed in " + out);
    }

    private static void drive(final String bootstrap) throws Exception
    {
        final Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        try (Admin admin = Admin.create(a))
        {
            createUntilUp(admin);
            admin.createTopics(List.of(new NewTopic("cds-three", 3, (short)1).configs(Map.of("retention.ms", "600000"))))
                .all().get(30, TimeUnit.SECONDS);
            produce(bootstrap);
            consume(bootstrap);
            final TopicPartition tp = new TopicPartition("cds-one", 0);
            admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS);
            admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get(30, TimeUnit.SECONDS);
            admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, "cds-three"))).all().get(30, TimeUnit.SECONDS);
            admin.describeTopics(List.of("cds-one", "cds-three")).allTopicNames().get(30, TimeUnit.SECONDS);
            admin.listConsumerGroups().all().get(30, TimeUnit.SECONDS);
            admin.describeConsumerGroups(List.of("cds-group")).all().get(30, TimeUnit.SECONDS);
            admin.listConsumerGroupOffsets("cds-group").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            admin.deleteTopics(List.of("cds-three")).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** The first request may come before the broker listens: retried, as the start-up workload does. */
    private static void createUntilUp(final Admin admin) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true)
        {
            try
            {
                admin.createTopics(List.of(new NewTopic("cds-one", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                return;
            }
            catch (final java.util.concurrent.ExecutionException ex)
            {
                if (System.nanoTime() > deadline)
                {
                    throw ex;
                }
                Thread.sleep(20);
            }
        }
    }

    private static void produce(final String bootstrap) throws Exception
    {
        final byte[] value = new byte[100];
        for (final String acks : new String[] {"0", "1", "all"})
        {
            for (final String codec : new String[] {"none", "gzip", "snappy", "lz4", "zstd"})
            {
                final Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ProducerConfig.ACKS_CONFIG, acks);
                p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "all".equals(acks));
                p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p))
                {
                    for (int i = 0; i < 200; i++)
                    {
                        producer.send(new ProducerRecord<>(i % 2 == 0 ? "cds-one" : "cds-three", ("k" + i).getBytes(), value));
                    }
                    producer.flush();
                }
            }
        }
    }

    private static void consume(final String bootstrap)
    {
        final Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "cds-group");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c))
        {
            consumer.subscribe(List.of("cds-one", "cds-three"));
            int seen = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (seen < 100 && System.nanoTime() < deadline)
            {
                final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                seen += records.count();
                if (!records.isEmpty())
                {
                    consumer.commitSync();
                }
            }
        }
    }
}
