package io.ferrite.log;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The deletion of a batch of partition logs for {@link LogManager#deleteLogs}, as Kafka's
 * {@code LogManager.asyncDelete} does it: each log closed for deletion and its directory renamed at
 * once to {@code <topic>-<partition>.<uuid>-delete}, so that the name and the directory name are free
 * for a new log as soon as this returns; the logs unpublished together (one rebuild of the manager's
 * log array, not one per partition); each log directory that held one fsynced once and its
 * checkpoints written again without them (a new log of the same name must not inherit the old one's
 * log start offset or recovery point after a crash); and the renamed directories removed only after
 * {@code file.delete.delay.ms}, with the segments' closes. A start finds what a stop or a crash left
 * of them by the {@code -delete} suffix and removes it, never loads it.
 *
 * <p>Why the close comes first: it shuts the writer out (an append in progress ends, later ones
 * answer LOG_CLOSED) and readies every segment for deletion ({@link Segment#forDeletion}), so that
 * from the rename on nothing of the old log reaches a file through its old path, which the new log's
 * files take: no roll, no snapshot, no retention, no trim or claim of an index. Readers that found
 * the log before keep their mappings and channels until the delayed close.
 */
final class LogDeletion
{
    static final String DELETE_SUFFIX = "-delete";
    /** Kafka 4.4's suffix of a stray log's directory: kept, never loaded again, never removed. */
    static final String STRAY_SUFFIX = "-stray";

    /** Writes a log directory's checkpoints from the logs published in it now. */
    @FunctionalInterface
    interface Checkpoint
    {
        void write(Path logDir) throws IOException;
    }

    private LogDeletion()
    {
    }

    /** The longest file name most file systems take (ext4, xfs: 255 bytes). */
    static final int MAX_FILE_NAME_BYTES = 255;

    /**
     * Kafka's name for a deleted partition's directory: {@code <topic>-<partition>.<uuid, 32 hex
     * digits>-delete}, the {@code <topic>-<partition>} part cut as Kafka cuts it so that the name stays
     * within {@value #MAX_FILE_NAME_BYTES} bytes (a legal topic name of 249 characters would otherwise
     * make a name the file system refuses: the deletion failed, and the next start with it). Only the
     * suffix is ever read back ({@link PartitionDirs}).
     */
    static Path deletedName(final Path dir)
    {
        return renamed(dir, DELETE_SUFFIX);
    }

    /** {@link #deletedName}, with {@code kind} ({@link #DELETE_SUFFIX} or {@link #STRAY_SUFFIX}) as its suffix. */
    static Path renamed(final Path dir, final String kind)
    {
        final String suffix = "." + UUID.randomUUID().toString().replace("-", "") + kind;
        final String name = dir.getFileName().toString(); // topic names are ASCII: a character is a byte
        final String kept = name.substring(0, Math.min(name.length(), MAX_FILE_NAME_BYTES - suffix.length()));
        return dir.resolveSibling(kept + suffix);
    }

    /**
     * Deletes {@code doomed}. Each log is closed and renamed on its own: one that fails stays published
     * as it is (closed when its close got that far), the others go, and the first failure is thrown
     * at the end with the later ones suppressed on it.
     *
     * @param unpublish removes the logs (null entries skipped) from the manager's name map and log array
     */
    static void delete(final PartitionLog[] doomed, final Consumer<PartitionLog[]> unpublish, final Checkpoint checkpoint,
        final LogBackgroundWork background) throws IOException
    {
        move(doomed, DELETE_SUFFIX, unpublish, checkpoint, background);
    }

    /**
     * {@link #delete}, or with {@link #STRAY_SUFFIX} Kafka 4.4's renaming of stray logs: the same close, rename and
     * unpublishing, but the renamed directory is kept (Kafka never removes a stray log; an operator does).
     */
    static void move(final PartitionLog[] doomed, final String kind, final Consumer<PartitionLog[]> unpublish,
        final Checkpoint checkpoint, final LogBackgroundWork background) throws IOException
    {
        final PartitionLog[] moved = new PartitionLog[doomed.length];
        final Set<Path> logDirs = new LinkedHashSet<>();
        Exception failure = null;
        for (int i = 0; i < doomed.length; i++)
        {
            final PartitionLog log = doomed[i];
            try
            {
                log.closeForDeletion();
                final Path renamed = renamed(log.dir(), kind);
                Files.move(log.dir(), renamed);
                log.movedTo(renamed);
                moved[i] = log;
                logDirs.add(renamed.getParent());
            }
            catch (final IOException | RuntimeException ex)
            {
                failure = first(failure, ex);
            }
        }
        unpublish.accept(moved);
        for (final PartitionLog log : moved)
        {
            if (log != null && kind.equals(DELETE_SUFFIX))
            {
                try
                {
                    background.removeLater(log.dir(), log.config().fileDeleteDelayMs);
                }
                catch (final IOException | RuntimeException ex)
                {
                    failure = first(failure, ex); // left for the next open, which removes it
                }
            }
        }
        for (final Path logDir : logDirs)
        {
            try
            {
                DurableFile.fsyncDirectory(logDir); // the renames are durable before the caller answers
                checkpoint.write(logDir);
            }
            catch (final IOException | RuntimeException ex)
            {
                failure = first(failure, ex);
            }
        }
        if (failure instanceof IOException io)
        {
            throw io;
        }
        if (failure != null)
        {
            throw (RuntimeException)failure;
        }
    }

    private static Exception first(final Exception failure, final Exception ex)
    {
        if (failure == null)
        {
            return ex;
        }
        failure.addSuppressed(ex);
        return failure;
    }
}
