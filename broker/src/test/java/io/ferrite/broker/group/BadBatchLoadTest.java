package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ferrite.broker.group.KafkaOffsetsLog.key;
import static io.ferrite.broker.group.KafkaOffsetsLog.message;
import static io.ferrite.broker.group.KafkaOffsetsLog.value;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A {@code __consumer_offsets} batch whose compressed records do not decompress (gzip, its bytes
 * garbled, its CRC recomputed so that the log takes it), between two good batches: the broker starts,
 * the good batches' offsets are listed, the bad one's are not, and one log line names the bad batch's base offset.
 */
class BadBatchLoadTest
{
    private static final Pattern SKIPPED = Pattern.compile("__consumer_offsets-0 offset ([0-9]+): a record skipped, its batch's records");
    private static final String GROUP = "g";
    private static final String TOPIC = "t";

    @TempDir
    Path dir;

    @Test
    void aBatchThatDoesNotDecompressIsSkippedWithOneLine() throws Exception
    {
        final KafkaOffsetsLog log = new KafkaOffsetsLog();
        final Map<Integer, Long> expected = new TreeMap<>();
        commit(log, 0, 10);
        commit(log, 1, 11);
        expected.put(0, 10L);
        expected.put(1, 11L);
        log.batch();
        commit(log, 2, 12);
        commit(log, 3, 13);
        final long badBase = log.garbledBatch();
        commit(log, 4, 14);
        expected.put(4, 14L);
        log.writeTo(dir);
        final PrintStream originalErr = System.err;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final Map<Integer, Long> listed = new TreeMap<>();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, "false", // a coordinator log written here, no Kafka metadata
            "offsets.topic.num.partitions", "1")));
            Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort())))
        {
            final Map<TopicPartition, OffsetAndMetadata> found =
                admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            found.forEach((tp, o) -> listed.put(tp.partition(), o.offset()));
        }
        finally
        {
            System.setErr(originalErr);
        }
        final String output = captured.toString(StandardCharsets.UTF_8);
        originalErr.print(output);
        assertEquals(expected, listed, "the good batches' offsets, and none of the bad one's");
        final List<Long> lines = new ArrayList<>();
        final Matcher m = SKIPPED.matcher(output);
        while (m.find())
        {
            lines.add(Long.parseLong(m.group(1)));
        }
        assertEquals(List.of(badBase), lines, "one line, naming the bad batch's base offset");
    }

    private static void commit(final KafkaOffsetsLog log, final int partition, final long offset)
    {
        log.add(key(message("OffsetCommitKey", "Group", GROUP, "Topic", TOPIC, "Partition", partition)),
            value(message("OffsetCommitValue", "Offset", offset, "LeaderEpoch", 0, "Metadata", "", "CommitTimestamp",
                System.currentTimeMillis(), "TopicId", Uuid.randomUuid()), 4));
    }
}
