/**
 * Memory-mapped, preallocated, binary-searched indexes of a log segment, byte-compatible with
 * Kafka's {@code .index} and {@code .timeindex} files.
 *
 * <p>Threading: one writer appends (the partition's appender); any number of readers look up
 * concurrently. Entries are written first, then the entry count is published with release
 * semantics ({@code setRelease}); readers load the count with acquire semantics and only read
 * entries below it. Indexes carry no checksum: they are rebuilt from the log whenever they fail a
 * sanity check or lie above the recovery point.
 */
package io.ferrite.index;
