package io.ferrite.log;

import io.ferrite.log.config.DurableFile;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@link CreationFsyncFailureTest}'s child, run with the fsync-failing shim: opens a log manager over two log
 * directories, creates the trigger file that arms the shim, makes one batch of three topics and prints, as
 * {@code RESULT} lines, what became of each and which partitions are published and which directories are left.
 *
 * <p>{@code CreationFsyncFailureChild <log dir a> <log dir b> <trigger file>}
 */
public final class CreationFsyncFailureChild
{
    /**
     * The batch: its topics and their partition counts, in order; each log directory takes the next partition while it
     * holds fewer (a first), so every topic has partitions in both but the last, all in {@code logdir-a}.
     */
    static final List<NewLogs> BATCH = List.of(
        new NewLogs("orders", 0, 3, Map.of("segment.bytes", "1048576"), CreationFsyncFailureChild::owner),
        new NewLogs("failing", 0, 3, Map.of(), CreationFsyncFailureChild::owner),
        new NewLogs("payments", 0, 2, Map.of(), CreationFsyncFailureChild::owner),
        new NewLogs("single", 0, 1, Map.of(), CreationFsyncFailureChild::owner)); // in logdir-a alone: the fewest-first order

    private CreationFsyncFailureChild()
    {
    }

    private static void owner(final Path partitionDir, final int partition) throws java.io.IOException
    {
        DurableFile.writeContent(partitionDir.resolve("owner.txt"), new byte[] {(byte)('0' + partition)});
    }

    public static void main(final String[] args) throws Exception
    {
        final Path a = Path.of(args[0]);
        final Path b = Path.of(args[1]);
        final LogManager manager = LogManager.open(LogManagerConfig.of(List.of(a, b), Map.of()));
        Files.createFile(Path.of(args[2]));
        final CreatedLogs created = manager.createLogs(BATCH, () -> { });
        for (int e = 0; e < BATCH.size(); e++)
        {
            final NewLogs entry = BATCH.get(e);
            System.out.println("RESULT " + entry.topic() + " " + (created.made(e) != null ? "made"
                : "failed " + created.failure(e).getClass().getSimpleName()));
            for (int p = entry.from(); p < entry.to(); p++)
            {
                final String key = entry.topic() + "-" + p;
                System.out.println("RESULT " + key + (manager.log(entry.topic(), p) != null ? " published" : " unpublished")
                    + (Files.exists(a.resolve(key)) || Files.exists(b.resolve(key)) ? " on disk" : " gone"));
            }
        }
        System.out.flush();
        Runtime.getRuntime().halt(0); // a close would checkpoint into a directory whose fsync fails: nothing to check there
    }
}
