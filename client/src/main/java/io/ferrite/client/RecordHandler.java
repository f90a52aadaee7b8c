package io.ferrite.client;

import io.ferrite.wire.record.Record;

/**
 * Takes the records {@link Consumer#poll} hands out, on the polling thread. {@code record} is a flyweight over the
 * fetch answer (or over the decompressed batch): its offset, timestamp, key, value and headers are read in place
 * ({@link Record#buffer()} with each field's offset and length), and it is valid only during the call — copy what
 * must outlive it. The partition's position moves past the record before the call (as kafka-clients' position moves
 * past the records {@code poll} returns): if the handler throws, that record counts as consumed and the next
 * {@code poll} goes on after it; seek back to read it again.
 */
@FunctionalInterface
public interface RecordHandler
{
    void onRecord(String topic, int partition, Record record);
}
