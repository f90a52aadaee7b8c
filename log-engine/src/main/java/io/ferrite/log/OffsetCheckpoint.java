package io.ferrite.log;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Kafka's offset checkpoint files in a log directory ({@code recovery-point-offset-checkpoint},
 * {@code log-start-offset-checkpoint}): a version line (0), a count line, then
 * {@code <topic> <partition> <offset>} per line. Written whole to a temporary file, fsynced and
 * renamed over the old one, then the directory is fsynced, so a crash leaves one or the other.
 */
final class OffsetCheckpoint
{
    static final String RECOVERY_POINTS = "recovery-point-offset-checkpoint";
    static final String LOG_START_OFFSETS = "log-start-offset-checkpoint";

    private OffsetCheckpoint()
    {
    }

    static String key(final String topic, final int partition)
    {
        return topic + "-" + partition;
    }

    /**
     * The offsets in {@code file} by {@code topic-partition}; empty when the file is missing or
     * damaged (not text, a line that is not {@code <topic> <partition> <offset>}). Why not refuse to
     * start, as Kafka does: a checkpoint only saves work — without recovery points every segment is
     * scanned, without log start offsets each log starts at its first segment — so a damaged one
     * costs time, not the data behind it.
     */
    static Map<String, Long> read(final Path file) throws IOException
    {
        if (!Files.exists(file))
        {
            return new HashMap<>();
        }
        try
        {
            return parse(Files.readAllLines(file, StandardCharsets.UTF_8));
        }
        catch (final java.nio.charset.CharacterCodingException | IllegalArgumentException ex)
        {
            org.slf4j.LoggerFactory.getLogger(OffsetCheckpoint.class).warn("{} is damaged ({}); going on without it", file, ex.toString());
            return new HashMap<>();
        }
    }

    private static Map<String, Long> parse(final List<String> lines)
    {
        final Map<String, Long> offsets = new HashMap<>();
        if (lines.size() < 2 || !lines.get(0).trim().equals("0"))
        {
            return offsets; // an unknown version: recover as if there were no checkpoint
        }
        for (int i = 2; i < lines.size(); i++)
        {
            final String[] parts = lines.get(i).trim().split(" ");
            if (parts.length != 3 && !lines.get(i).isBlank())
            {
                throw new IllegalArgumentException("line " + (i + 1) + " is not '<topic> <partition> <offset>'");
            }
            if (parts.length == 3)
            {
                offsets.put(key(parts[0], Integer.parseInt(parts[1])), Long.parseLong(parts[2]));
            }
        }
        return offsets;
    }

    /** Writes {@code offsets} (keyed by topic and partition) atomically and durably. */
    static void write(final Path file, final Map<String, Long> offsetsByKey, final Map<String, String[]> topicPartitions)
        throws IOException
    {
        final StringBuilder sb = new StringBuilder("0\n").append(offsetsByKey.size()).append('\n');
        for (final Map.Entry<String, Long> e : new TreeMap<>(offsetsByKey).entrySet())
        {
            final String[] tp = topicPartitions.get(e.getKey());
            sb.append(tp[0]).append(' ').append(tp[1]).append(' ').append(e.getValue()).append('\n');
        }
        DurableFile.write(file, sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Both checkpoints of a log directory, from {@code logs} (the logs published in it). */
    static void writeBoth(final Path dir, final Iterable<PartitionLog> logs) throws IOException
    {
        final Map<String, Long> recovery = new HashMap<>();
        final Map<String, Long> starts = new HashMap<>();
        final Map<String, String[]> names = new HashMap<>();
        for (final PartitionLog log : logs)
        {
            final String key = key(log.topic(), log.partition());
            recovery.put(key, log.recoveryPoint());
            starts.put(key, log.logStartOffset());
            names.put(key, new String[] {log.topic(), Integer.toString(log.partition())});
        }
        write(dir.resolve(RECOVERY_POINTS), recovery, names);
        write(dir.resolve(LOG_START_OFFSETS), starts, names);
    }

    /** Whether every entry of the checkpoints read names a log {@code loaded} knows (else some are stale). */
    @SafeVarargs
    static boolean onlyNames(final java.util.function.Predicate<String> loaded, final Map<String, Long>... checkpoints)
    {
        for (final Map<String, Long> entries : checkpoints)
        {
            for (final String key : entries.keySet())
            {
                if (!loaded.test(key))
                {
                    return false;
                }
            }
        }
        return true;
    }
}
