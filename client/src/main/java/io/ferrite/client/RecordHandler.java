package io.ferrite.client;

import io.ferrite.wire.record.Record;

/**
 * Takes the records {@link Consumer#poll} hands out, on the polling thread. {@code record} is a flyweight over the
 * fetch answer (or over the decompressed batch): its offset, timestamp, key, value and headers are read in place
 * ({@link Record#buffer()} with each field's offset and length), and it is valid only during the call — copy what
 * must outlive it.
 */
@FunctionalInterface
public interface RecordHandler
{
    void onRecord(String topic, int partition, Record record);
}
