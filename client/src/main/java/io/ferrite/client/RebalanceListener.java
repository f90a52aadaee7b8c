package io.ferrite.client;

/**
 * Told of the partitions a subscribed consumer gains and gives up in its group's rebalances (kafka-clients'
 * {@code ConsumerRebalanceListener}, one call per partition so nothing is allocated per call). Called on the consumer's
 * thread from its duty cycle ({@link Consumer#doWork}), or from {@link Consumer#close}.
 * <p>
 * {@link #onRevoked}: the partition is about to go (a rebalance, or close) — its position is still readable and an
 * offset given to {@link Consumer#commitOffset} here is committed, with the consumed positions when auto-commit is on,
 * before the consumer joins again (the commit is awaited, within {@code max.poll.interval.ms}). Do not call
 * {@code commitSync} from here: the consumer commits for you. {@link #onLost}: the membership was lost (the coordinator
 * no longer knows the member, or {@code max.poll.interval.ms} passed), so the partition may already be another
 * member's and nothing is committed for it. {@link #onAssigned}: the partition is this member's now; its position is
 * the group's committed offset, or {@code auto.offset.reset} without one.
 */
public interface RebalanceListener
{
    /** A listener that does nothing. */
    RebalanceListener NONE = new RebalanceListener()
    {
        @Override
        public void onRevoked(final String topic, final int partition)
        {
        }

        @Override
        public void onAssigned(final String topic, final int partition)
        {
        }
    };

    void onRevoked(String topic, int partition);

    void onAssigned(String topic, int partition);

    /** By default the same as {@link #onRevoked} (as kafka-clients' {@code onPartitionsLost}). */
    default void onLost(final String topic, final int partition)
    {
        onRevoked(topic, partition);
    }
}
