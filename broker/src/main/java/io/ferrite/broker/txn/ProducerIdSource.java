package io.ferrite.broker.txn;

import java.io.IOException;

/** Where new producer ids come from: {@code io.ferrite.broker.ProducerIds} in the broker. */
@FunctionalInterface
public interface ProducerIdSource
{
    /** {@link #next}'s answer when no id is available yet (the next block is being reserved): COORDINATOR_LOAD_IN_PROGRESS. */
    long NONE_YET = -1;

    /** A new producer id, or {@link #NONE_YET} without waiting; throws when the ids could not be reserved (KAFKA_STORAGE_ERROR). */
    long next() throws IOException;
}
