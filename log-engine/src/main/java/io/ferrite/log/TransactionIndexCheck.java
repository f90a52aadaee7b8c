package io.ferrite.log;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

import static io.ferrite.log.AbortedTxnDescriptor.ENTRY_LENGTH;
import static io.ferrite.log.AbortedTxnDescriptor.FIRST_OFFSET_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.LAST_OFFSET_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.LAST_STABLE_OFFSET_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.VERSION;
import static io.ferrite.log.AbortedTxnDescriptor.VERSION_OFFSET;

/**
 * A {@link TransactionIndex} file found at open, checked before it is used, and its positional reads of
 * whole entries: the file is cut after its last sane entry — a torn tail after a crash, an entry that is
 * not version 0, names a marker below the segment, does not follow the one before it, or has an impossible
 * offset (negative, or a last stable offset equal to the marker's) — as Kafka's recovery truncates a log at
 * its first bad byte. The index carries no checksum: what it says is rebuilt from the markers when it is lost.
 */
final class TransactionIndexCheck
{
    private static final Logger LOG = LoggerFactory.getLogger(TransactionIndex.class); // the index's log, as before the split
    /** Entries read at a time by the check (4 352 bytes: about a page). */
    private static final int ENTRIES_PER_READ = 128;

    /** What the check kept: the sane entries, the last one's marker offset (-1: none), and whether the file was cut. */
    record Checked(int entries, long lastOffset, boolean cut)
    {
    }

    private TransactionIndexCheck()
    {
    }

    /** Checks the file open in {@code ch} (read and write) of the segment at {@code baseOffset}, cutting it after its last sane entry. */
    static Checked check(final FileChannel ch, final long baseOffset, final Path path) throws IOException
    {
        final long size = ch.size();
        final ByteBuffer buffer = ByteBuffer.allocate(ENTRY_LENGTH * ENTRIES_PER_READ);
        int sane = 0;
        long last = -1;
        final long whole = Math.min(size / ENTRY_LENGTH, Integer.MAX_VALUE / ENTRY_LENGTH);
        String why = size % ENTRY_LENGTH != 0 ? "a torn entry at its end" : null;
        scan:
        while (sane < whole)
        {
            final int n = read(ch, buffer, (long)sane * ENTRY_LENGTH, (int)Math.min(ENTRIES_PER_READ, whole - sane));
            if (n == 0)
            {
                why = "fewer bytes than its size";
                break;
            }
            for (int i = 0; i < n; i++)
            {
                final int at = i * ENTRY_LENGTH;
                final long first = buffer.getLong(at + FIRST_OFFSET_OFFSET);
                final long lastOfEntry = buffer.getLong(at + LAST_OFFSET_OFFSET);
                final long lastStable = buffer.getLong(at + LAST_STABLE_OFFSET_OFFSET);
                // the last stable offset is never the marker's own offset (it is the first offset of another
                // producer's open transaction, or the marker's + 1): this is what an entry of zeros fails in
                // segment 0, where a power loss can leave the file's new size without its bytes
                if (buffer.getShort(at + VERSION_OFFSET) != VERSION || lastOfEntry < baseOffset || lastOfEntry <= last ||
                    first > lastOfEntry || first < 0 || lastStable < 0 || lastStable == lastOfEntry)
                {
                    why = "entry " + sane + " not sane";
                    break scan;
                }
                last = lastOfEntry;
                sane++;
            }
        }
        if (why != null)
        {
            LOG.warn("{}: {}; cut to its {} entries before it", path, why, sane);
            ch.truncate((long)sane * ENTRY_LENGTH);
        }
        return new Checked(sane, last, why != null);
    }

    /**
     * Reads up to {@code count} whole entries at {@code position} into {@code buffer} from its start.
     *
     * @return the whole entries read: fewer at the end of the file
     */
    static int read(final FileChannel ch, final ByteBuffer buffer, final long position, final int count)
        throws IOException
    {
        if (count * ENTRY_LENGTH > buffer.capacity() || count < 0)
        {
            throw new IllegalArgumentException("a buffer of " + buffer.capacity() + " bytes cannot take " + count + " entries");
        }
        buffer.clear().limit(count * ENTRY_LENGTH);
        while (buffer.hasRemaining())
        {
            if (ch.read(buffer, position + buffer.position()) < 0)
            {
                break;
            }
        }
        return buffer.position() / ENTRY_LENGTH;
    }
}
