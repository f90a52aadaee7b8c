package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.EOFException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A read error of a mapped segment page during a fetch (SIGBUS, which HotSpot raises as {@link InternalError} from
 * the Unsafe access; here the segment file is cut under its mapping, as EIO on a failing disk would fault) closes that
 * connection — the client sees the end of the stream, as when a {@code transferTo} fails — and never leaves it hung
 * without an answer (the client would wait out its request timeout); the network thread serves other connections on.
 */
class MappedReadErrorFetchTest
{
    @TempDir
    Path dir;

    @Test
    void aFaultReadingAMappedSegmentClosesTheConnection() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("cut", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "1")))
            {
                producer.send(new ProducerRecord<>("cut", 0, null, new byte[1000])).get(20, TimeUnit.SECONDS);
            }
            final Path segment;
            try (Stream<Path> files = Files.list(dir.resolve("cut-0")))
            {
                segment = files.filter(f -> f.getFileName().toString().endsWith(".log")).findFirst().orElseThrow();
            }
            try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw"))
            {
                final long length = file.length();
                file.setLength(0); // the mapping stays; its pages now lie past the file's end: touching them faults
                try (RawClient raw = new RawClient(broker.broker.address().getPort()))
                {
                    // a hang would end in SocketTimeoutException after the client's 20 s read timeout
                    assertThrows(EOFException.class, () -> raw.exchange(ApiKeys.FETCH, (short)12, new FetchRequestData()
                        .setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20).setSessionEpoch(-1)
                        .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("cut").setPartitions(List.of(
                            new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)))))));
                }
                finally
                {
                    file.setLength(length); // zeros again under the mapping, so that the broker's close touches no hole
                }
            }
            try (RawClient other = new RawClient(broker.broker.address().getPort()))
            {
                assertEquals(0, other.apiVersions().errorCode(), "the network thread serves other connections");
            }
        }
    }
}
