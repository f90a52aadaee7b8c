package io.ferrite.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An index holds an open file only while it takes entries: the mapping is all a reader needs, and a
 * descriptor per index made three per segment (10 000 one-segment partitions: 30 000, past a 20 000
 * ulimit, where Kafka holds one per segment). An index without entries (an idle partition's) and a
 * sealed one hold none. Checked in this process's {@code /proc/self/fd}.
 */
class IndexFileHandlesTest
{
    @TempDir
    Path dir;

    @Test
    void anIndexKeepsNoFileOpen() throws IOException
    {
        final Path file = dir.resolve("00000000000000000000.index");
        try (OffsetIndex index = new OffsetIndex(file, 0, 1024 * 1024, true))
        {
            assertEquals(0, openHandles(file), "after opening");
            for (int i = 1; i <= 3000; i++) // more than one claim of blocks
            {
                index.ensureRoomAllocated();
                index.append(i * 10L, i * 4096);
            }
            assertEquals(1, openHandles(file), "while it takes entries (claims must not open the file each time)");
            index.trimToValidSize();
            assertEquals(0, openHandles(file), "after the trim");
            assertEquals(3000L * OffsetIndex.ENTRY_SIZE, Files.size(file));
            assertEquals(2999 * 4096, index.lookup(29_995), "the entries are still searched in the mapping");
        }
        try (OffsetIndex index = new OffsetIndex(file, 0, 1024 * 1024, false))
        {
            assertEquals(0, openHandles(file), "a read-only index");
            assertEquals(2999 * 4096, index.lookup(29_995));
        }
    }

    private static long openHandles(final Path file) throws IOException
    {
        if (!Files.exists(file))
        {
            return 0; // not made yet (IndexFileCreationTest): nothing can hold it open
        }
        final Path target = file.toRealPath();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.filter(fd ->
            {
                try
                {
                    return Files.readSymbolicLink(fd).equals(target);
                }
                catch (final IOException ex)
                {
                    return false; // closed while listing
                }
            }).count();
        }
    }
}
