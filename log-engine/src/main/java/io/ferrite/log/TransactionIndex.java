package io.ferrite.log;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.ferrite.log.AbortedTxnDescriptor.ENTRY_LENGTH;
import static io.ferrite.log.AbortedTxnDescriptor.FIRST_OFFSET_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.LAST_OFFSET_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.LAST_STABLE_OFFSET_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.PRODUCER_ID_OFFSET;
import static io.ferrite.log.AbortedTxnDescriptor.VERSION;
import static io.ferrite.log.AbortedTxnDescriptor.VERSION_OFFSET;

/**
 * One segment's aborted transaction index, {@code <base offset>.txnindex}, byte for byte Kafka's
 * ({@link AbortedTxnDescriptor}): one entry per transaction whose ABORT marker is in the segment.
 *
 * <p><b>Lazy.</b> The file is made at the first entry; a segment without an aborted transaction has
 * none (nor a descriptor), as in Kafka — a partition's creation and roll cost no file for it.
 *
 * <p><b>Threading.</b> One writer ({@link #append}, {@link #truncateTo}: the partition's writer, or
 * recovery before the log is shared) writes with positional channel writes, then publishes the entry
 * count with a release store; readers ({@link #collect}, from fetching threads) load it with acquire
 * and read no byte beyond it, with positional reads into a buffer of their own: no lock, no mapping.
 * A channel rather than a mapping because a file that grows by 34 bytes would need a remap per
 * entry (or a preallocated tail of zeros, which Kafka's reader would take for entries), and because a
 * read racing {@link #close} then fails with {@code ClosedChannelException} instead of touching an
 * unmapped page. The flush ({@link #flush}, {@link #takeNewName}) runs on flushing threads, one at a
 * time (the log's flush lock).
 *
 * <p><b>Interrupts.</b> A JDK 17 {@code FileChannel} is interruptible, and has no public way out of
 * it: a thread interrupted inside (or before) a read closes the channel for every user of it. So
 * readers never touch the writer's channel: they read through a read-only channel of their own
 * ({@link #readChannel}), and a reader that finds it closed while the index is neither closed nor
 * deleted — another reader was interrupted — opens the file again, publishes the new channel with a
 * CAS (a racing reader's loses and is closed) and retries its read once. The interrupted reader
 * itself answers {@link #FAILED} and keeps its interrupt. Appends, truncation and flushes go on,
 * undisturbed, on the writer's channel.
 */
final class TransactionIndex
{
    static final String SUFFIX = ".txnindex";
    /** {@link #collect}: the walk found the entry that ends it (Kafka's {@code isComplete}). */
    static final int COMPLETE = 1;
    /** {@link #collect}: go on with the next segment. */
    static final int GO_ON = 0;
    /** {@link #collect}: the file could not be read (closed under the read, an I/O error). */
    static final int FAILED = -1;

    private static final Logger LOG = LoggerFactory.getLogger(TransactionIndex.class);
    private static final VarHandle ENTRIES;
    private static final VarHandle READ_CHANNEL;

    static
    {
        try
        {
            ENTRIES = MethodHandles.lookup().findVarHandle(TransactionIndex.class, "entries", int.class);
            READ_CHANNEL = MethodHandles.lookup().findVarHandle(TransactionIndex.class, "readChannel", FileChannel.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final long baseOffset;
    /** The segment's {@code .log}: this file is its sibling, named when first needed. */
    private final Path logPath;
    /** The writer's and the flush's. Set (by the writer or the open) before the first entry is published; never unset. */
    private FileChannel channel;
    /** The readers' (read-only), set with {@link #channel}; replaced (CAS) when an interrupt closed it. */
    private volatile FileChannel readChannel;
    /** Closed, or its path may name another file (deleted, or its directory renamed): readers open nothing by it. */
    private volatile boolean gone;
    @SuppressWarnings("unused") // through ENTRIES
    private volatile int entries;
    // writer state
    private long lastOffset = -1;
    private ByteBuffer entry;
    /** Entries the last fsync covered (flushing threads, under the log's flush lock). */
    private int flushedEntries;
    /** The file was made and its directory entry not yet fsynced (set by the writer, taken by a flush). */
    private volatile boolean newName;

    private TransactionIndex(final long baseOffset, final Path logPath)
    {
        this.baseOffset = baseOffset;
        this.logPath = logPath;
    }

    /**
     * The index of the segment whose log file is {@code logPath}: empty and without a file, or, when
     * {@code found}, the file in place, checked and cut after its last sane entry ({@link TransactionIndexCheck}).
     */
    static TransactionIndex open(final long baseOffset, final Path logPath, final boolean found) throws IOException
    {
        final TransactionIndex index = new TransactionIndex(baseOffset, logPath);
        if (found)
        {
            index.load();
        }
        return index;
    }

    Path path()
    {
        return logPath.resolveSibling(Segment.fileName(baseOffset, SUFFIX));
    }

    /** Whether the segment has a {@code .txnindex} file (made or found). */
    boolean hasFile()
    {
        return channel != null;
    }

    /** Entries readers may read (acquire). */
    int entries()
    {
        return (int)ENTRIES.getAcquire(this);
    }

    /** The last offset of the last entry, or -1 (writer state). */
    long lastOffset()
    {
        return lastOffset;
    }

    private void load() throws IOException
    {
        final FileChannel ch = FileChannel.open(path(), StandardOpenOption.READ, StandardOpenOption.WRITE);
        try
        {
            final TransactionIndexCheck.Checked checked = TransactionIndexCheck.check(ch, baseOffset, path());
            readChannel = FileChannel.open(path(), StandardOpenOption.READ);
            channel = ch;
            lastOffset = checked.lastOffset();
            flushedEntries = checked.cut() ? -1 : checked.entries(); // a cut is flushed with the segment
            ENTRIES.setRelease(this, checked.entries());
        }
        catch (final IOException | RuntimeException ex)
        {
            ch.close();
            throw ex;
        }
    }

    /**
     * Appends the entry of one aborted transaction (single writer), making the file at the first.
     *
     * @param lastOffset the ABORT marker's offset: in this segment, above every entry's before it
     * @throws IllegalArgumentException when {@code lastOffset} is below the segment's base offset or
     *     not above the last entry's, or {@code firstOffset} is above it; nothing is written
     * @throws IOException when the disk refuses it; nothing is published
     */
    void append(final long producerId, final long firstOffset, final long lastOffset, final long lastStableOffset)
        throws IOException
    {
        if (lastOffset < baseOffset || lastOffset <= this.lastOffset || firstOffset > lastOffset)
        {
            throw new IllegalArgumentException("aborted transaction of producer " + producerId + " from " + firstOffset +
                " to " + lastOffset + " does not follow the last one (" + this.lastOffset + ") of " + path());
        }
        if (channel == null)
        {
            // a stale file of the same name (a segment deleted at this base offset) is emptied, not appended to
            final FileChannel made = FileChannel.open(path(), StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
            try
            {
                readChannel = FileChannel.open(path(), StandardOpenOption.READ);
            }
            catch (final IOException | RuntimeException ex)
            {
                made.close(); // the next entry makes it again
                throw ex;
            }
            channel = made;
            newName = true;
        }
        if (entry == null)
        {
            entry = ByteBuffer.allocate(ENTRY_LENGTH); // big-endian; one per index that takes entries
        }
        entry.clear();
        entry.putShort(VERSION_OFFSET, VERSION)
            .putLong(PRODUCER_ID_OFFSET, producerId)
            .putLong(FIRST_OFFSET_OFFSET, firstOffset)
            .putLong(LAST_OFFSET_OFFSET, lastOffset)
            .putLong(LAST_STABLE_OFFSET_OFFSET, lastStableOffset);
        final int n = entries();
        long at = (long)n * ENTRY_LENGTH;
        while (entry.hasRemaining())
        {
            at += channel.write(entry, at);
        }
        this.lastOffset = lastOffset;
        ENTRIES.setRelease(this, n + 1);
    }

    /**
     * Drops the entries whose marker is at or above {@code offset} (the log is cut there, or recovery
     * re-appends them; {@code offset} at or below the base offset empties the index, keeping its file).
     * Writer only; readers that loaded the old count meet the end of the file and stop there.
     */
    void truncateTo(final long offset) throws IOException
    {
        final int n = entries();
        if (n == 0 || lastOffset < offset)
        {
            return;
        }
        final ByteBuffer buffer = ByteBuffer.allocate(ENTRY_LENGTH);
        int keep = n;
        long last = lastOffset;
        while (keep > 0 && last >= offset)
        {
            keep--;
            last = -1;
            if (keep > 0 && TransactionIndexCheck.read(channel, buffer, (long)(keep - 1) * ENTRY_LENGTH, 1) == 1)
            {
                last = buffer.getLong(LAST_OFFSET_OFFSET);
            }
        }
        ENTRIES.setRelease(this, keep);
        lastOffset = last;
        channel.truncate((long)keep * ENTRY_LENGTH);
    }

    /**
     * Kafka's {@code TransactionIndex.collectAbortedTxns}: gives {@code sink} every entry with
     * {@code lastOffset >= fetchOffset && firstOffset < upperBoundOffset}, in order, and stops at the
     * first entry whose last stable offset is at or above {@code upperBoundOffset} (no later marker can
     * abort a transaction that began below the bound). Any thread; reads through {@code scratch}
     * (whole entries at a time, so its capacity is at least 34; its position, limit and order are the
     * walk's), allocates nothing.
     *
     * <p>It does not read the entries from the first: a binary search (one entry per probe, while more
     * than a {@code scratch}-full is left) finds the first entry whose marker is at or above
     * {@code fetchOffset}, and the walk starts at the one before it. Entries before that one cannot
     * match; Kafka's walk could stop at one of them, but the last stable offsets of a segment's
     * entries never decrease (each is the first offset of a transaction still open when its marker
     * was written, or that marker's offset + 1; a transaction open at a later marker was open at the
     * earlier one, or began after it), so if any of them ends the walk the one just before the
     * first candidate does, and the walk reads it (should a file break this order, the walk can only
     * list more aborted transactions that the fetch overlaps, which a consumer handles). A fetch at
     * the head of a busy transactional segment therefore reads about log2(entries) + 1 entries, not
     * the whole file.
     *
     * @return {@link #COMPLETE}, {@link #GO_ON} or {@link #FAILED}
     */
    int collect(final long fetchOffset, final long upperBoundOffset, final ByteBuffer scratch, final AbortedTxnSink sink)
    {
        final int n = entries();
        if (n == 0)
        {
            return GO_ON;
        }
        final int perRead = scratch.capacity() / ENTRY_LENGTH; // at least one: the caller checked
        scratch.order(ByteOrder.BIG_ENDIAN);
        try
        {
            int lo = 0;
            int hi = n; // the first entry with lastOffset >= fetchOffset is in [lo, hi]
            while (hi - lo > perRead)
            {
                final int mid = (lo + hi) >>> 1;
                if (readEntries(scratch, (long)mid * ENTRY_LENGTH, 1) == 0)
                {
                    return GO_ON; // cut meanwhile (recovery or truncation): the end of the file is the end
                }
                if (scratch.getLong(LAST_OFFSET_OFFSET) < fetchOffset)
                {
                    lo = mid + 1;
                }
                else
                {
                    hi = mid;
                }
            }
            for (int done = Math.max(0, lo - 1); done < n; )
            {
                final int asked = Math.min(perRead, n - done);
                final int got = readEntries(scratch, (long)done * ENTRY_LENGTH, asked);
                for (int i = 0; i < got; i++)
                {
                    final int at = i * ENTRY_LENGTH;
                    final long first = scratch.getLong(at + FIRST_OFFSET_OFFSET);
                    if (scratch.getLong(at + LAST_OFFSET_OFFSET) >= fetchOffset && first < upperBoundOffset)
                    {
                        sink.abortedTransaction(scratch.getLong(at + PRODUCER_ID_OFFSET), first);
                    }
                    if (scratch.getLong(at + LAST_STABLE_OFFSET_OFFSET) >= upperBoundOffset)
                    {
                        return COMPLETE;
                    }
                }
                if (got < asked)
                {
                    return GO_ON; // cut meanwhile (recovery or truncation): the end of the file is the end
                }
                done += got;
            }
            return GO_ON;
        }
        catch (final IOException ex)
        {
            return FAILED;
        }
    }

    /**
     * {@link TransactionIndexCheck#read} through the readers' channel; when another reader's interrupt closed it, again
     * through a channel opened again ({@link #reopen}) — as often as other readers' interrupts close
     * it (once was not enough: a reader interrupted twice in a row closed the reopened channel too, and
     * an uninterrupted walk failed; TxnIndexInterruptTest saw it once in CI).
     */
    private int readEntries(final ByteBuffer buffer, final long position, final int count) throws IOException
    {
        FileChannel ch = readChannel;
        while (true)
        {
            try
            {
                return TransactionIndexCheck.read(ch, buffer, position, count);
            }
            catch (final ClosedChannelException closed)
            {
                if (gone || Thread.currentThread().isInterrupted())
                {
                    throw closed; // closed by the index's close, or by this reader's own interrupt: it answers FAILED
                }
                ch = reopen(ch);
            }
        }
    }

    /**
     * The readers' channel in place of {@code stale}, which an interrupt closed: the one another
     * reader published meanwhile, or the file opened again and published with a CAS. Not on a closed
     * or deleted index, whose path may by now name another log's file.
     */
    private FileChannel reopen(final FileChannel stale) throws IOException
    {
        final FileChannel current = readChannel;
        if (current != stale)
        {
            return current;
        }
        final FileChannel fresh = FileChannel.open(path(), StandardOpenOption.READ);
        if (!READ_CHANNEL.compareAndSet(this, stale, fresh))
        {
            fresh.close();
            return readChannel;
        }
        if (gone)
        {
            fresh.close(); // the close or the deletion came meanwhile, and may have closed the stale one only
            throw new ClosedChannelException();
        }
        LOG.info("{}: its readers' channel was closed by an interrupted reader; opened again", path());
        return fresh;
    }

    /** fsync of what was appended since the last one (the data, and the size needed to read it back). */
    void flush() throws IOException
    {
        final int n = entries();
        if (n != flushedEntries && channel != null)
        {
            channel.force(false);
            flushedEntries = n;
        }
    }

    /**
     * Whether the file was made since the last call: its name is durable only once the directory
     * is fsynced, which the caller then does (a power loss could otherwise keep the markers and
     * lose the index that says what they aborted).
     */
    boolean takeNewName()
    {
        if (newName)
        {
            newName = false;
            return true;
        }
        return false;
    }

    /**
     * From now on the path may name another file (the segment's files are deleted, or its partition's
     * directory renamed): readers whose channel an interrupt closes no longer open it again.
     */
    void forDeletion()
    {
        gone = true;
    }

    /** Deletes the file, if the segment has one; the open channels stay readable until {@link #close}. */
    void deleteFile() throws IOException
    {
        gone = true;
        if (channel != null)
        {
            Files.deleteIfExists(path());
        }
    }

    /** Closes the file; a read that comes after (or races it) gets {@link #FAILED}, never a crash. */
    void close() throws IOException
    {
        gone = true; // before the readers' channel is read: a reader's reopen after this closes its own
        if (channel != null)
        {
            CloseSteps.all(channel::close, () ->
            {
                final FileChannel readers = readChannel;
                if (readers != null)
                {
                    readers.close();
                }
            });
        }
    }
}
