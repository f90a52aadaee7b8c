package io.ferrite.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * The partition counts of the internal topics in a test broker: {@value #OFFSETS_PARTITIONS} for
 * {@code __consumer_offsets} and {@value #TRANSACTION_STATE_PARTITIONS} for {@code __transaction_state}, where
 * production (Ferrite and Kafka alike) makes 50 of each.
 *
 * <p>Why. A broker makes an internal topic at its first use (a group's first request, a transactional producer's
 * first InitProducerId) with all its partitions, each a directory, a segment, its indexes and their fsyncs, and closes
 * every one of them at its stop: a hundred partitions a test that uses both, for nothing the test looks at. Kafka's own
 * test brokers set both counts low for the same reason. A test whose point is the production count (a group's
 * partition as Kafka places it by default, a topic grown from 50) sets its count itself: a setting of the test's own
 * is never replaced by these.
 */
public final class TestInternalTopics
{
    public static final String OFFSETS_SETTING = "offsets.topic.num.partitions";
    public static final String TRANSACTION_STATE_SETTING = "transaction.state.log.num.partitions";
    /** Five, not one: a test's groups still spread over several partitions, as they do in production. */
    public static final int OFFSETS_PARTITIONS = 5;
    public static final int TRANSACTION_STATE_PARTITIONS = 5;

    private TestInternalTopics()
    {
    }

    /** {@code config} with the test counts added where it sets none (a copy; {@code config} is not changed). */
    public static Map<String, String> withTestCounts(final Map<String, String> config)
    {
        final Map<String, String> values = new HashMap<>(config);
        values.putIfAbsent(OFFSETS_SETTING, Integer.toString(OFFSETS_PARTITIONS));
        values.putIfAbsent(TRANSACTION_STATE_SETTING, Integer.toString(TRANSACTION_STATE_PARTITIONS));
        return values;
    }
}
