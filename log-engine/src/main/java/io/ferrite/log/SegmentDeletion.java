package io.ferrite.log;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The deletion of a segment's files, once ({@link Segment#isForDeletion}): the segment readied for it first
 * ({@link Segment#forDeletion}: readers that found it search its indexes until it is closed, and nothing reaches its
 * files by path again), its mappings and open channels left readable until its close. Retention unlinks the files at
 * once ({@link #deleteFiles}, one segment per hold of the segments lock); a replacement, which must free the names of
 * a whole run under that lock, renames them ({@link #renameForDeletion}), as Kafka's {@code asyncDelete}.
 */
final class SegmentDeletion
{
    /** A replaced segment's files between their rename and their unlink; the open removes any it finds ({@link SwapRecovery}). */
    static final String DELETED_SUFFIX = ".deleted";

    private SegmentDeletion()
    {
    }

    /** Deletes its files (a replacement reuses the names: {@link SegmentReplacer}); channels stay readable till closed. */
    static void deleteFiles(final Segment s) throws IOException
    {
        if (s.isForDeletion())
        {
            return; // deleted, or its directory renamed: nothing of it is reached by path any more
        }
        s.forDeletion(); // readers that found the segment search its indexes until the delay passed
        Files.deleteIfExists(s.log.path());
        Files.deleteIfExists(s.offsetIndex.file());
        Files.deleteIfExists(s.timeIndex.file());
        s.txnIndex.deleteFile();
    }

    /**
     * A replacement's deletion, under the segments lock: each file renamed to {@code <name>.deleted} — a rename in the
     * directory, where an unlink may also free the blocks of a file no one holds open (milliseconds for a large one,
     * while a roll waits for the lock) — and unlinked by the segment's close, after {@code file.delete.delay.ms}, under
     * the lock again and only while the log is open: a closed one's go with its renamed directory (a deletion) or at
     * the next open, which removes every {@code .deleted} file it finds; so does the open after a crash.
     */
    static void renameForDeletion(final Segment s, final SegmentList segments) throws IOException
    {
        if (s.isForDeletion())
        {
            return;
        }
        s.forDeletion();
        final List<Path> renamed = new ArrayList<>(4);
        s.afterClose(() -> segments.underOpenLog(() ->
        {
            for (final Path p : renamed)
            {
                Files.deleteIfExists(p);
            }
        }));
        for (final Path p : new Path[] {s.log.path(), s.offsetIndex.file(), s.timeIndex.file(), s.txnIndex.path()})
        {
            try
            {
                renamed.add(Files.move(p, p.resolveSibling(p.getFileName() + DELETED_SUFFIX), StandardCopyOption.ATOMIC_MOVE));
            }
            catch (final NoSuchFileException none)
            {
                // the indexes and the transaction index are made lazily: one rename(2) and no stat per file, under the lock
            }
        }
    }
}
