package io.ferrite.log;

import org.apache.kafka.common.message.AbortedTxn;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One segment's {@code .txnindex} on real files: Kafka 4.4's own {@code TransactionIndex} reads what
 * we write and we read what it writes; the file is made at the first entry; appends out of order are
 * refused; truncation; a torn or insane tail found at open is cut.
 */
class TransactionIndexTest
{
    private static final long BASE = 1000;

    @TempDir
    Path dir;

    private Path logPath()
    {
        return dir.resolve(Segment.fileName(BASE, Segment.LOG_SUFFIX));
    }

    private Path txnPath()
    {
        return dir.resolve(Segment.fileName(BASE, TransactionIndex.SUFFIX));
    }

    @Test
    void kafkasTransactionIndexReadsOurEntries() throws Exception
    {
        final TransactionIndex ours = TransactionIndex.open(BASE, logPath(), false);
        ours.append(7, 990, 1000, 990);
        ours.append(8, 1001, 1005, 1006);
        ours.append(Long.MAX_VALUE, 1002, 1010, 1011);
        ours.close();
        assertEquals(3 * 34, Files.size(txnPath()), "34 bytes an entry, nothing else");

        final org.apache.kafka.storage.internals.log.TransactionIndex kafka =
            new org.apache.kafka.storage.internals.log.TransactionIndex(BASE, txnPath().toFile());
        try
        {
            kafka.sanityCheck();
            assertEquals(List.of(txn(7, 990, 1000, 990), txn(8, 1001, 1005, 1006), txn(Long.MAX_VALUE, 1002, 1010, 1011)),
                kafka.allAbortedTxns());
        }
        finally
        {
            kafka.close();
        }
    }

    @Test
    void weReadKafkasEntries() throws Exception
    {
        final org.apache.kafka.storage.internals.log.TransactionIndex kafka =
            new org.apache.kafka.storage.internals.log.TransactionIndex(BASE, txnPath().toFile());
        kafka.append(txn(3, 900, 1003, 950));
        kafka.append(txn(4, 1004, 1020, 1021));
        kafka.close();

        final TransactionIndex ours = TransactionIndex.open(BASE, logPath(), true);
        assertEquals(2, ours.entries());
        assertEquals(1020, ours.lastOffset());
        assertEquals(List.of("3@900", "4@1004"), collect(ours, 0, Long.MAX_VALUE));
        ours.append(5, 1021, 1030, 1031); // and appends after them
        ours.close();
        final org.apache.kafka.storage.internals.log.TransactionIndex again =
            new org.apache.kafka.storage.internals.log.TransactionIndex(BASE, txnPath().toFile());
        assertEquals(3, again.allAbortedTxns().size());
        again.close();
    }

    @Test
    void theFileIsMadeAtTheFirstEntry() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        assertFalse(index.hasFile());
        assertEquals(List.of(), collect(index, 0, Long.MAX_VALUE));
        index.flush();
        index.truncateTo(0);
        index.deleteFile();
        index.close();
        assertFalse(Files.exists(txnPath()), "no entry, no file");

        final TransactionIndex writing = TransactionIndex.open(BASE, logPath(), false);
        writing.append(1, BASE, BASE + 1, BASE + 2);
        assertTrue(Files.exists(txnPath()));
        assertTrue(writing.takeNewName(), "a flush must make its name durable");
        assertFalse(writing.takeNewName(), "once");
        writing.deleteFile();
        assertFalse(Files.exists(txnPath()));
        assertEquals(List.of("1@1000"), collect(writing, 0, Long.MAX_VALUE), "the open file stays readable until the close");
        writing.close();
        assertEquals(TransactionIndex.FAILED, writing.collect(0, Long.MAX_VALUE, ByteBuffer.allocate(34), (p, f) -> { }),
            "a read after the close fails, it does not crash");
    }

    @Test
    void entriesOutOfOrderOrBelowTheSegmentAreRefused() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        assertThrows(IllegalArgumentException.class, () -> index.append(1, 900, BASE - 1, BASE));
        assertFalse(Files.exists(txnPath()), "a refused first entry makes no file");
        index.append(1, 900, BASE + 5, BASE + 6);
        assertThrows(IllegalArgumentException.class, () -> index.append(2, 900, BASE + 5, BASE + 6), "not above the last");
        assertThrows(IllegalArgumentException.class, () -> index.append(2, BASE + 9, BASE + 8, BASE + 9), "first above last");
        assertEquals(1, index.entries());
        assertEquals(34, Files.size(txnPath()));
        index.close();
    }

    @Test
    void truncationDropsTheEntriesAtOrAboveTheOffset() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        for (int i = 0; i < 10; i++)
        {
            index.append(i, BASE + 10L * i, BASE + 10L * i + 5, BASE + 10L * i + 6);
        }
        index.truncateTo(BASE + 36); // keeps the markers at 1005, 1015, 1025, 1035
        assertEquals(4, index.entries());
        assertEquals(BASE + 35, index.lastOffset());
        assertEquals(4 * 34, Files.size(txnPath()));
        index.truncateTo(BASE + 100);
        assertEquals(4, index.entries(), "nothing at or above");
        index.append(99, BASE + 36, BASE + 37, BASE + 38); // goes on after the kept ones
        assertEquals(List.of("0@1000", "1@1010", "2@1020", "3@1030", "99@1036"), collect(index, 0, Long.MAX_VALUE));
        index.truncateTo(BASE);
        assertEquals(0, index.entries());
        assertEquals(-1, index.lastOffset());
        assertEquals(0, Files.size(txnPath()));
        index.append(1, BASE, BASE + 1, BASE + 2);
        index.close();
    }

    @Test
    void aTornTailFoundAtOpenIsCutToTheLastWholeEntry() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        index.append(1, 900, BASE + 1, BASE + 2);
        index.append(2, 901, BASE + 3, BASE + 4);
        index.close();
        try (RandomAccessFile raf = new RandomAccessFile(txnPath().toFile(), "rw"))
        {
            raf.seek(raf.length());
            raf.write(new byte[] {0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}); // a crash mid-entry
        }
        final TransactionIndex reopened = TransactionIndex.open(BASE, logPath(), true);
        assertEquals(2, reopened.entries());
        assertEquals(2 * 34, Files.size(txnPath()));
        assertEquals(List.of("1@900", "2@901"), collect(reopened, 0, Long.MAX_VALUE));
        reopened.append(3, 902, BASE + 5, BASE + 6);
        reopened.close();
        final org.apache.kafka.storage.internals.log.TransactionIndex kafka =
            new org.apache.kafka.storage.internals.log.TransactionIndex(BASE, txnPath().toFile());
        assertEquals(3, kafka.allAbortedTxns().size(), "Kafka reads the repaired file");
        kafka.close();
    }

    @Test
    void anInsaneEntryFoundAtOpenCutsTheFileBeforeIt() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        for (int i = 0; i < 4; i++)
        {
            index.append(i, 900, BASE + i, BASE + i + 1);
        }
        index.close();
        // zeros over the third entry (a block the crash left unwritten): its marker is below the segment
        try (RandomAccessFile raf = new RandomAccessFile(txnPath().toFile(), "rw"))
        {
            raf.seek(2 * 34);
            raf.write(new byte[34]);
        }
        final TransactionIndex reopened = TransactionIndex.open(BASE, logPath(), true);
        assertEquals(2, reopened.entries());
        assertEquals(BASE + 1, reopened.lastOffset());
        assertEquals(2 * 34, Files.size(txnPath()));
        reopened.close();

        // an entry of a version Kafka does not know
        try (RandomAccessFile raf = new RandomAccessFile(txnPath().toFile(), "rw"))
        {
            raf.seek(34);
            raf.writeShort(1);
        }
        final TransactionIndex again = TransactionIndex.open(BASE, logPath(), true);
        assertEquals(1, again.entries());
        again.close();
    }

    /**
     * The file of segment 0 extended for its first entry and the entry's bytes lost with the power: an
     * entry of zeros, which passes every other check in segment 0 (version 0, marker 0 at the base
     * offset, first offset not above it). Its last stable offset is the marker's own offset, which no
     * ABORT can have: cut.
     */
    @Test
    void anEntryOfZerosInSegmentZeroIsCutAtOpen() throws Exception
    {
        final Path log0 = dir.resolve(Segment.fileName(0, Segment.LOG_SUFFIX));
        final Path txn0 = dir.resolve(Segment.fileName(0, TransactionIndex.SUFFIX));
        Files.write(txn0, new byte[34]);
        final TransactionIndex index = TransactionIndex.open(0, log0, true);
        assertEquals(0, index.entries());
        assertEquals(-1, index.lastOffset());
        assertEquals(0, Files.size(txn0));
        final List<String> seen = new ArrayList<>();
        assertEquals(TransactionIndex.GO_ON, index.collect(0, Long.MAX_VALUE, ByteBuffer.allocate(68), (p, f) -> seen.add(p + "@" + f)));
        assertEquals(List.of(), seen, "no aborted transaction of producer 0 at offset 0");
        index.append(3, 0, 4, 2); // the segment's first real entry takes its place
        assertEquals(List.of("3@0"), collect(index, 0, Long.MAX_VALUE));
        index.close();
        final TransactionIndex reopened = TransactionIndex.open(0, log0, true);
        assertEquals(1, reopened.entries());
        reopened.close();
    }

    /**
     * A fetch near the end of a segment with many entries does not read them all: damage planted in
     * the first entries after the open (a last stable offset that would end the walk, an insane
     * marker) is never read by a walk at an offset past them, which lists what it should.
     */
    @Test
    void theWalkSearchesForItsFirstEntryInsteadOfReadingFromTheFirst() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        for (int i = 0; i < 100; i++)
        {
            index.append(i, BASE + 10 * i, BASE + 10 * i + 5, BASE + 10 * i + 6);
        }
        try (RandomAccessFile raf = new RandomAccessFile(txnPath().toFile(), "rw"))
        {
            for (int i = 0; i < 10; i++)
            {
                raf.seek(i * 34L + 26); // last stable offset: it would end the walk at once
                raf.writeLong(Long.MAX_VALUE);
            }
        }
        for (final int scratch : new int[] {34, 68, 340})
        {
            final List<String> seen = new ArrayList<>();
            assertEquals(TransactionIndex.COMPLETE, index.collect(BASE + 900, BASE + 975, ByteBuffer.allocate(scratch),
                (p, f) -> seen.add(p + "@" + f)));
            assertEquals(List.of("90@1900", "91@1910", "92@1920", "93@1930", "94@1940", "95@1950", "96@1960", "97@1970"), seen,
                "scratch of " + scratch + " bytes");
            // at the first entry after the damage, the entry before it (damaged) ends the walk, as Kafka's walk does
            seen.clear();
            assertEquals(TransactionIndex.COMPLETE, index.collect(BASE + 100, BASE + 975, ByteBuffer.allocate(scratch),
                (p, f) -> seen.add(p + "@" + f)));
            assertEquals(List.of(), seen);
        }
        index.close();
    }

    @Test
    void theWalkTakesTheEntriesTheFetchOverlapsAndStopsAtTheFirstWhoseLastStableOffsetReachesTheBound() throws Exception
    {
        final TransactionIndex index = TransactionIndex.open(BASE, logPath(), false);
        index.append(1, 990, 1002, 995);   // ended before the fetch
        index.append(2, 995, 1010, 1000);  // began before it, ended inside: listed
        index.append(3, 1011, 1020, 1021); // inside; its LSO reaches the bound 1015: the walk ends here
        index.append(4, 1012, 1030, 1031); // would be listed by the filter, but is past the end of the walk
        final List<String> seen = new ArrayList<>();
        final ByteBuffer scratch = ByteBuffer.allocateDirect(34); // one entry a read
        assertEquals(TransactionIndex.COMPLETE, index.collect(1005, 1015, scratch, (p, f) -> seen.add(p + "@" + f)));
        assertEquals(List.of("2@995", "3@1011"), seen);
        seen.clear();
        assertEquals(TransactionIndex.GO_ON, index.collect(1005, 2000, ByteBuffer.allocate(1000), (p, f) -> seen.add(p + "@" + f)));
        assertEquals(List.of("2@995", "3@1011", "4@1012"), seen);
        index.close();
    }

    private static List<String> collect(final TransactionIndex index, final long fetchOffset, final long upperBound)
    {
        final List<String> seen = new ArrayList<>();
        final int status = index.collect(fetchOffset, upperBound, ByteBuffer.allocate(68), (p, f) -> seen.add(p + "@" + f));
        assertTrue(status != TransactionIndex.FAILED);
        return seen;
    }

    private static AbortedTxn txn(final long producerId, final long first, final long last, final long lastStable)
    {
        return new AbortedTxn().setProducerId(producerId).setFirstOffset(first).setLastOffset(last).setLastStableOffset(lastStable);
    }
}
