package io.ferrite.broker.txn;

import java.io.IOException;

/** Where new producer ids come from: {@code io.ferrite.broker.ProducerIds::next} in the broker. */
@FunctionalInterface
public interface ProducerIdSource
{
    long next() throws IOException;
}
