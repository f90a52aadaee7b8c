package io.ferrite.broker.e2e;

import io.ferrite.testing.ChildJvm;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

import java.time.Duration;
import java.util.Properties;

/**
 * A Kafka Streams word count, the child JVM's side of {@link ForkedWordCount}: input records (key a unique
 * sequence number, value a word) are re-keyed by word (a repartition topic), counted in a RocksDB store (with
 * its changelog topic) and every count update goes to the output topic (key the word, value the count as a
 * long). The record cache is off, so each input record gives exactly one update.
 */
final class WordCountApplication
{
    private WordCountApplication()
    {
    }

    /** The child side: args bootstrap applicationId input output stateDir guarantee. */
    public static void main(final String[] args) throws InterruptedException
    {
        ChildJvm.haltWithParent();

        final Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[5]);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // every input record gives one output record: the check reads each count 1..n
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        // commit.interval.ms stays Streams' default for the guarantee: 100 ms under exactly_once_v2, 30 s under
        // at_least_once (with which the check fails: what was processed since the last commit is counted again)
        // a killed member sends no LeaveGroup: its successor's rebalance waits for its session to end (the
        // broker's smallest, 6 s, rather than Streams' 45 s)
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6_000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1_000);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
            .groupBy((sequence, word) -> word, Grouped.with("by-word", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .toStream()
            .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));
        final KafkaStreams streams = new KafkaStreams(builder.build(), p);
        streams.setStateListener((now, before) ->
        {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(ex ->
        {
            System.out.println("FAILED " + ex);
            System.out.flush();
            ex.printStackTrace();
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        // SIGTERM (ForkedWordCount.stop) closes it cleanly: processing stopped, offsets committed, stores flushed and
        // checkpointed, and the group left (not Streams' default: the next run's rebalance then need not wait for this
        // member's session to end). SIGKILL (ForkedWordCount.kill) runs no hook: nothing of that happens
        final CloseOptions leaving = CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(30));
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
            System.err.println("closed on SIGTERM, in time: " + streams.close(leaving)), "close-streams"));
        streams.start();
        while (true)
        {
            Thread.sleep(60_000); // runs until killed or stopped
        }
    }
}
