package io.ferrite.broker.admin;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The creation journal's file: records read back, a torn or damaged tail cut off, the replay's rule against deletions. */
class CreationJournalFileTest
{
    @TempDir
    Path dir;

    private static CreationJournal.Entry create(final String name, final long id, final int partitions)
    {
        return new CreationJournal.Entry(CreationJournal.Kind.CREATE, name, id, id, partitions, Map.of("retention.ms", "1000"));
    }

    @Test
    void recordsAreReadBackAndATornTailIsCutOff() throws Exception
    {
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            journal.append(List.of(create("a", 1, 3), create("b", 2, 1)));
            journal.append(List.of(create("c", 3, 2)));
        }
        final Path file = dir.resolve(CreationJournal.FILE_NAME);
        final long whole = Files.size(file);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(whole - 3); // a crash in the middle of the second append
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(create("a", 1, 3), create("b", 2, 1)), journal.entries());
            assertTrue(Files.size(file) < whole - 3, "the torn record cut off");
            journal.append(List.of(create("d", 4, 1))); // appended after the intact records
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(create("a", 1, 3), create("b", 2, 1), create("d", 4, 1)), journal.entries());
        }
    }

    @Test
    void aRecordWhoseChecksumFailsEndsTheRead() throws Exception
    {
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            journal.append(List.of(create("a", 1, 3)));
            journal.append(List.of(create("b", 2, 1)));
        }
        final Path file = dir.resolve(CreationJournal.FILE_NAME);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.seek(Files.size(file) - 2);
            final int b = raf.read();
            raf.seek(Files.size(file) - 2);
            raf.write(b ^ 0x40); // a byte of the last record's payload flipped
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(create("a", 1, 3)), journal.entries());
        }
    }

    @Test
    void anEmptiedJournalStaysEmptyAcrossAnOpen() throws Exception
    {
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            journal.append(List.of(create("a", 1, 3)));
            journal.clear();
            assertTrue(journal.isEmpty());
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(), journal.entries());
            assertEquals(0, Files.size(dir.resolve(CreationJournal.FILE_NAME)));
        }
    }

    @Test
    void aDeletionVoidsTheCreationsBeforeItOfItsIdOnly() throws Exception
    {
        final List<CreationJournal.Entry> entries = List.of(create("gone", 1, 3), create("kept", 2, 1),
            new CreationJournal.Entry(CreationJournal.Kind.DELETE, "gone", 1, 1, 0, Map.of()),
            new CreationJournal.Entry(CreationJournal.Kind.GROW, "kept", 2, 2, 4, Map.of()),
            create("gone", 3, 2)); // the name created again after its deletion, with a new id
        final Map<String, CreationJournal.Entry> wanted = CreationReplay.wanted(entries);
        assertEquals(2, wanted.size(), wanted.toString());
        assertTrue(wanted.values().contains(new CreationJournal.Entry(CreationJournal.Kind.CREATE, "kept", 2, 2, 4,
            Map.of("retention.ms", "1000"))), "kept created with 4 partitions: " + wanted);
        assertTrue(wanted.values().contains(create("gone", 3, 2)), "gone's second creation only: " + wanted);
    }
}
