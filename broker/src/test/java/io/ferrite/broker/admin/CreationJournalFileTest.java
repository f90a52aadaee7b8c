package io.ferrite.broker.admin;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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

    /** A config value longer than 64 KiB of UTF-8 (Kafka accepts it) is journaled and read back. */
    @Test
    void aConfigValueOver64KiBIsJournaled() throws Exception
    {
        final String value = "\u00e9".repeat(40_000); // 80 000 bytes of UTF-8
        final CreationJournal.Entry big = new CreationJournal.Entry(CreationJournal.Kind.CREATE, "big", 5, 5, 1,
            Map.of("message.timestamp.type", "CreateTime", "x.long", value));
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            journal.append(List.of(big));
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(big), journal.entries());
        }
    }

    /**
     * A stray interrupt of the journal's thread costs at most the append in hand: one pending when an append starts
     * does not fail it (and is kept for the caller); interrupts landing at any point of the appends (from another
     * thread) leave the journal working, and exactly the appends that returned normally in the file, none that threw.
     */
    @Test
    void strayInterruptsCostAtMostTheAppendInHand() throws Exception
    {
        final List<CreationJournal.Entry> appended = new java.util.ArrayList<>();
        int failed = 0;
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            Thread.currentThread().interrupt();
            journal.append(List.of(create("pending", 1, 1)));
            assertTrue(Thread.interrupted(), "the interrupt kept for the caller");
            appended.add(create("pending", 1, 1));
            final Thread self = Thread.currentThread();
            final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            final java.util.concurrent.atomic.AtomicLong round = new java.util.concurrent.atomic.AtomicLong();
            final Thread interrupter = new Thread(() ->
            {
                long seen = -1;
                while (!done.get())
                {
                    final long r = round.get();
                    if (r != seen && r % 3 == 0)
                    {
                        seen = r;
                        self.interrupt(); // somewhere in the append of round r, or just before it
                    }
                    Thread.onSpinWait();
                }
            });
            interrupter.start();
            try
            {
                for (int i = 0; i < 300; i++)
                {
                    round.set(i);
                    final CreationJournal.Entry e = create("t" + i, 10 + i, 1);
                    try
                    {
                        journal.append(List.of(e));
                        appended.add(e);
                    }
                    catch (final java.io.IOException ex)
                    {
                        failed++;
                    }
                    Thread.interrupted();
                }
            }
            finally
            {
                done.set(true);
                interrupter.join();
                Thread.interrupted();
            }
            final CreationJournal.Entry after = create("after", 999, 1);
            journal.append(List.of(after)); // the journal still works
            appended.add(after);
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(appended, journal.entries(), failed + " appends failed");
        }
        System.out.println("appends failed by an interrupt mid-way: " + failed + " of 300");
    }

    /**
     * An emptying whose fsync fails may leave the old records on disk: the journal does not count as empty, so a
     * deletion still journals itself (else a power loss could bring back a CREATE with nothing voiding it). A failed
     * append's fsync: the record answered as failed is cut off, the next append lands after the intact ones.
     */
    @Test
    void aFailedFsyncNeitherCountsAsEmptyNorLeavesARecordBehind() throws Exception
    {
        try (CreationJournal journal = CreationJournal.open(dir, FailingChannel::opening))
        {
            journal.append(List.of(create("a", 1, 1)));
            FailingChannel.failForce = true;
            try
            {
                assertThrows(java.io.IOException.class, journal::clear);
                assertFalse(journal.isEmpty(), "an emptying not known durable counted as empty");
                assertThrows(java.io.IOException.class, () -> journal.append(List.of(create("refused", 2, 1))));
            }
            finally
            {
                FailingChannel.failForce = false;
            }
            journal.deleting("a", 1, 1);
            journal.append(List.of(create("b", 3, 1)));
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(new CreationJournal.Entry(CreationJournal.Kind.DELETE, "a", 1, 1, 0, Map.of()), create("b", 3, 1)),
                journal.entries());
        }
    }

    /**
     * A rewrite replaces every record by one of the entries it keeps (durably, by a rename), and later appends follow
     * it: an open reads the kept entries then the appended ones, and no rewrite file stays behind.
     */
    @Test
    void aRewriteKeepsItsEntriesOnlyAndLaterAppendsFollowThem() throws Exception
    {
        final Path file = dir.resolve(CreationJournal.FILE_NAME);
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            journal.append(List.of(create("a", 1, 3), create("b", 2, 1)));
            journal.append(List.of(create("c", 3, 2)));
            journal.deleting("a", 1, 1);
            final long before = Files.size(file);
            journal.rewrite(List.of(create("c", 3, 2)));
            assertEquals(List.of(create("c", 3, 2)), journal.entries());
            assertEquals(journal.size(), Files.size(file));
            assertTrue(Files.size(file) < before, Files.size(file) + " bytes after the rewrite, " + before + " before");
            assertEquals(journal.size(), journal.rewrittenSize());
            journal.append(List.of(create("d", 4, 1)));
            journal.deleting("c", 3, 3);
        }
        assertFalse(Files.exists(dir.resolve(CreationJournal.REWRITE_NAME)));
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(create("c", 3, 2), create("d", 4, 1),
                new CreationJournal.Entry(CreationJournal.Kind.DELETE, "c", 3, 3, 0, Map.of())), journal.entries());
            journal.clear();
            assertEquals(0, journal.rewrittenSize(), "an emptying starts the rewrite's doubling again");
        }
    }

    /** A crash during a rewrite, before its rename, leaves the journal whole and the new file: deleted at open, unread. */
    @Test
    void anUnfinishedRewriteIsDeletedAtOpen() throws Exception
    {
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            journal.append(List.of(create("a", 1, 3), create("b", 2, 1)));
        }
        Files.writeString(dir.resolve(CreationJournal.REWRITE_NAME), "half a rewrite");
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(create("a", 1, 3), create("b", 2, 1)), journal.entries());
            assertFalse(Files.exists(dir.resolve(CreationJournal.REWRITE_NAME)), "the unfinished rewrite deleted");
        }
    }

    /** A rewrite whose new file cannot be made durable changes nothing: every record stays, in memory and on disk. */
    @Test
    void aRewriteWhoseFsyncFailsKeepsEveryRecord() throws Exception
    {
        try (CreationJournal journal = CreationJournal.open(dir, FailingChannel::opening))
        {
            journal.append(List.of(create("a", 1, 3), create("b", 2, 1)));
            final long size = journal.size();
            FailingChannel.failForce = true;
            try
            {
                assertThrows(java.io.IOException.class, () -> journal.rewrite(List.of(create("b", 2, 1))));
            }
            finally
            {
                FailingChannel.failForce = false;
            }
            assertEquals(List.of(create("a", 1, 3), create("b", 2, 1)), journal.entries());
            assertEquals(size, journal.size());
            assertEquals(size, journal.rewrittenSize(), "not tried again before the journal has doubled");
            assertFalse(Files.exists(dir.resolve(CreationJournal.REWRITE_NAME)));
            journal.append(List.of(create("c", 3, 1)));
        }
        try (CreationJournal journal = CreationJournal.open(dir))
        {
            assertEquals(List.of(create("a", 1, 3), create("b", 2, 1), create("c", 3, 1)), journal.entries());
        }
    }
}
