/**
 * The log cleaner's clean of one log, as Kafka 4.4's log cleaner does it for RecordBatch v2 (compaction, issue 13):
 * {@link io.ferrite.log.clean.LogCompactor} runs one clean ({@link io.ferrite.log.clean.LogCompaction}) through the
 * file-free parts below and the log's {@code io.ferrite.log.SegmentReplacer} (the crash-safe swap of
 * {@code .cleaned}/{@code .swap} files); the cleaner threads that choose the log and keep its checkpoint call it.
 *
 * <p>A clean of one log, as {@code LogCompactor} runs these parts on its thread:
 * <pre>
 *   map.clear(); loader.transactions().clear();               // OffsetMap, OffsetMapLoader
 *   ... loader.transactions().addAbortedTransaction(...)       // the dirty range's .txnindex entries
 *   for each batch from the first dirty offset:                // stop when load answers false: the map is full
 *       loader.load(batch, firstDirtyOffset)                   // and its LoadedOffsets: put, superseded
 *   map.updateLatestOffset(segmentEnd - 1) after each whole segment
 *
 *   retention.reset(now, delete.retention.ms, highWatermark); // CleanerRetention
 *   ... retention.activeProducers().add(...)                   // the producer state's last batches
 *   ... retention.transactions().addAbortedTransaction(...)    // per segment, as Kafka's cleanSegments
 *   for each group of segments from the log start to the end of the map (SegmentGroups):
 *       log.segmentReplacer().replace(group, batch ->          // the replacer writes the .cleaned segments
 *           n = filter.filter(batch, retention)                // BatchFilter: staged, its length known
 *           the batch itself, filter.output()[0, n) or nothing)
 * </pre>
 *
 * <ul>
 *   <li>{@link io.ferrite.log.clean.OffsetMap}: key hash (MurmurHash3 x64 128, {@link io.ferrite.log.clean.KeyHash}; Kafka: MD5) to latest offset, off-heap, Kafka's slots and probes
 *   ({@link io.ferrite.log.clean.OffsetMapDescriptor}).</li>
 *   <li>{@link io.ferrite.log.clean.OffsetMapLoader}: fills the map from the dirty batches, noting in its
 *   {@code LoadedOffsets} which offsets it put and which a later put superseded, so the filter hashes no dirty key
 *   a second time and skips the records of batches wholly superseded.</li>
 *   <li>{@link io.ferrite.log.clean.RecordRetention}: the decision per batch and per record (Kafka's
 *   {@code RecordFilter}); {@link io.ferrite.log.clean.CleanerRetention} is the cleaner's, over the map,
 *   {@link io.ferrite.log.clean.ActiveProducers} and {@link io.ferrite.log.clean.CleanedTransactions}.</li>
 *   <li>{@link io.ferrite.log.clean.BatchFilter}: writes what the decision keeps of a batch (Kafka's
 *   {@code filterTo}).</li>
 * </ul>
 *
 * <p>Threading: every class here is used by one thread (a cleaner thread owns one of each); nothing is shared
 * and nothing is published, so there is no memory-order convention to state (the log a clean reads and replaces is
 * shared, through its own any-thread methods: {@code readBatch}, {@code collectAbortedTransactions},
 * {@code lastBatchesOfProducers}, {@code segmentReplacer()}). Nothing allocates per batch or per
 * record once the scratch arrays and buffers have grown to the largest batch and the number of aborted
 * transactions in one clean ({@code OffsetMapTest}, {@code BatchFilterAllocationTest}).
 *
 * <p>Checked against Kafka's own code where it is public: the map's slots are byte for byte those of Kafka's
 * {@code SkimpyOffsetMap} for the same keys ({@code OffsetMapTest}); {@code CleanedTransactions} answers as Kafka's
 * {@code CleanedTransactionMetadata} ({@code CleanedTransactionsTest}); and {@code BatchFilter} writes the bytes
 * Kafka's {@code MemoryRecords.filterTo} writes given the same retention answers ({@code CompactionPropertyTest};
 * zstd by header and records). The retention rules ({@code CleanerRetention}, Kafka's private {@code Cleaner}) are
 * checked against that test's own model of a clean, not against Kafka running.
 */
package io.ferrite.log.clean;
