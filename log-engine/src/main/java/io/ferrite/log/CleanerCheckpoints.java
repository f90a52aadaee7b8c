package io.ferrite.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The {@code cleaner-offset-checkpoint} of each log directory (Kafka's format, {@link OffsetCheckpoint}):
 * per compacted partition, the offset below which its log is clean. Kept by log object, not by name, so
 * that a new log of a deleted one's name never takes the deleted one's entry; an entry goes from the
 * file at the next write after its log is unpublished. The caller holds the log manager's checkpoint
 * lock for every method (a deletion unpublishes under it), so an entry of a deleted log is never
 * written after the deletion's checkpoint left it out.
 */
final class CleanerCheckpoints
{
    static final String FILE = "cleaner-offset-checkpoint";

    private final Map<PartitionLog, Long> offsets = new IdentityHashMap<>();

    /** Reads {@code dir}'s file, keeping the entries of {@code logsInDir} (the others go at its next write). */
    void load(final Path dir, final Iterable<PartitionLog> logsInDir) throws IOException
    {
        final Map<String, Long> read = OffsetCheckpoint.read(dir.resolve(FILE));
        for (final PartitionLog log : logsInDir)
        {
            final Long offset = read.get(OffsetCheckpoint.key(log.topic(), log.partition()));
            if (offset != null)
            {
                offsets.put(log, offset);
            }
        }
    }

    /** The log's entry, or null. */
    Long get(final PartitionLog log)
    {
        return offsets.get(log);
    }

    /** Sets the log's entry and writes its directory's file from {@code logsInDir} (the logs published there). */
    void update(final PartitionLog log, final long offset, final Iterable<PartitionLog> logsInDir) throws IOException
    {
        offsets.put(log, offset);
        write(log.dir().getParent(), logsInDir);
    }

    /**
     * Drops the entries of {@code dir}'s logs that are no longer in {@code logsInDir} (deleted) and, when
     * there were some, writes the file without them.
     */
    void forgetGone(final Path dir, final Iterable<PartitionLog> logsInDir) throws IOException
    {
        final Map<PartitionLog, Boolean> published = new IdentityHashMap<>();
        for (final PartitionLog log : logsInDir)
        {
            published.put(log, Boolean.TRUE);
        }
        if (offsets.keySet().removeIf(log -> log.dir().getParent().equals(dir) && !published.containsKey(log)))
        {
            write(dir, logsInDir);
        }
    }

    private void write(final Path dir, final Iterable<PartitionLog> logsInDir) throws IOException
    {
        final Map<String, Long> byKey = new HashMap<>();
        final Map<String, String[]> names = new HashMap<>();
        for (final PartitionLog log : logsInDir)
        {
            final Long offset = offsets.get(log);
            if (offset != null)
            {
                final String key = OffsetCheckpoint.key(log.topic(), log.partition());
                byKey.put(key, offset);
                names.put(key, new String[] {log.topic(), Integer.toString(log.partition())});
            }
        }
        OffsetCheckpoint.write(dir.resolve(FILE), byKey, names);
    }
}
