package io.ferrite.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link MappedIndex#forDeletion}: once an index is readied for the deletion of its file (or the
 * rename of its directory), nothing it does reaches a file through its path — the path may by then
 * name another partition's index of the same name — while its entries stay searchable in the mapping.
 * Here another file takes the path, as a partition deleted and made again under the same name does.
 */
class IndexForDeletionTest
{
    @TempDir
    Path dir;

    @Test
    void aDeletedIndexsCloseAndClaimsLeaveTheFileNowAtItsPathAlone() throws IOException
    {
        final Path file = dir.resolve("00000000000000000000.index");
        final Path moved = Files.createDirectory(dir.resolve("renamed")).resolve(file.getFileName());
        final OffsetIndex index = new OffsetIndex(file, 0, 1024 * 1024, true);
        try
        {
            for (int i = 1; i <= 100; i++)
            {
                index.ensureRoomAllocated();
                index.append(i * 10L, i * 4096);
            }
            index.forDeletion();
            Files.move(file, moved);
            final byte[] other = new byte[64 * 1024];
            other[0] = 42;
            Files.write(file, other); // the new partition's index

            index.ensureRoomAllocated();
            index.allocateAhead();
            index.trimToValidSize();
            index.flush();
            index.close();

            assertEquals(other.length, Files.size(file), "the file now at the path is not trimmed, claimed or extended");
            assertEquals(42, Files.readAllBytes(file)[0]);
            assertEquals(99 * 4096, index.lookup(995), "the deleted index's entries are still searched in its mapping");
        }
        finally
        {
            index.unmapNow();
        }
    }
}
