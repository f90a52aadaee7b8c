package io.ferrite.broker.txn;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogKey;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Ferrite starts on a {@code __transaction_state} that Kafka 4.4's serializer wrote (TransactionLogValue
 * 0 and 1, the versions 4.4 writes) among records that cannot be read — a value cut short, a key cut
 * short, a key without room for its type, a value with an unknown state, a record without a key: the
 * good transactions are described by Kafka's Admin as written, and each bad record has one log line
 * naming its partition and offset.
 */
class TxnStateLoadTest
{
    private static final Pattern SKIPPED = Pattern.compile("__transaction_state-0 offset ([0-9]+): a record skipped");

    @TempDir
    Path dir;

    @Test
    void goodTransactionsLoadAndBadRecordsAreSkippedOneLineEach() throws Exception
    {
        final long now = System.currentTimeMillis();
        final List<SimpleRecord> records = new ArrayList<>();
        final byte[] v0 = value(1000, 4, 0, now);
        final byte[] v1 = value(1001, 7, 1, now);
        records.add(new SimpleRecord(now, key("txn-v0"), v0));
        records.add(new SimpleRecord(now, key("txn-v1"), Arrays.copyOf(v1, v1.length - 3))); // 1: cut short
        records.add(new SimpleRecord(now, key("txn-v1"), v1));
        records.add(new SimpleRecord(now, Arrays.copyOf(key("txn-v0"), 5), value(1002, 1, 1, now))); // 3: key cut short
        records.add(new SimpleRecord(now, new byte[1], v1)); // 4: no room for the key's type
        final byte[] badState = value(1003, 1, 1, now);
        badState[2 + 8 + 2 + 4] = 42; // 5: a state no Kafka has
        records.add(new SimpleRecord(now, key("txn-v0"), badState));
        records.add(new SimpleRecord(now, null, v0)); // 6: no key
        final Path partition = Files.createDirectories(dir.resolve("__transaction_state-0"));
        try (FileChannel ch = FileChannel.open(partition.resolve("00000000000000000000.log"), StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE))
        {
            final ByteBuffer bytes = MemoryRecords.withRecords(Compression.NONE, records.toArray(new SimpleRecord[0])).buffer();
            while (bytes.hasRemaining())
            {
                ch.write(bytes);
            }
        }

        final PrintStream originalErr = System.err;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        final Map<String, TransactionDescription> described;
        try (Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, "false", // a coordinator log written here, no Kafka metadata
            BrokerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS, "1")));
            Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort())))
        {
            described = admin.describeTransactions(List.of("txn-v0", "txn-v1")).all().get(30, TimeUnit.SECONDS);
        }
        finally
        {
            System.setErr(originalErr);
        }
        final String log = captured.toString(StandardCharsets.UTF_8);
        System.err.print(log);
        assertEquals(1000, described.get("txn-v0").producerId());
        assertEquals(4, described.get("txn-v0").producerEpoch());
        assertEquals(TransactionState.EMPTY, described.get("txn-v0").state());
        assertEquals(1001, described.get("txn-v1").producerId());
        assertEquals(7, described.get("txn-v1").producerEpoch());
        final Set<Long> logged = new TreeSet<>();
        int lines = 0;
        for (final Matcher m = SKIPPED.matcher(log); m.find(); lines++)
        {
            logged.add(Long.parseLong(m.group(1)));
        }
        assertEquals(Set.of(1L, 3L, 4L, 5L, 6L), logged, log);
        assertEquals(5, lines, "one line per bad record");
    }

    private static byte[] key(final String id)
    {
        return MessageUtil.toCoordinatorTypePrefixedBytes(new TransactionLogKey().setTransactionalId(id));
    }

    /** An Empty transaction's value at {@code version}, by Kafka's generated serializer. */
    private static byte[] value(final long producerId, final int epoch, final int version, final long now)
    {
        return MessageUtil.toVersionPrefixedBytes((short)version, new TransactionLogValue().setProducerId(producerId)
            .setProducerEpoch((short)epoch).setTransactionTimeoutMs(60_000).setTransactionStatus((byte)0).setTransactionPartitions(null)
            .setTransactionLastUpdateTimestampMs(now).setTransactionStartTimestampMs(-1));
    }
}
