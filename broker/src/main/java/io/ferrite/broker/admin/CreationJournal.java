package io.ferrite.broker.admin;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The single-node broker's durable record of the topic creations it has answered and not yet made
 * whole in the partitions' own files: what Kafka's metadata log is to its controller, for one node.
 * A CreateTopics (or CreatePartitions) request is answered once its one record is appended and
 * fsynced here; the admin agent then makes the partitions' files in chunks between its commands
 * ({@link PendingCreations}) and empties the journal once every record in it is reflected in those files. A start-up after a
 * crash between the answer and the files replays what is left ({@link CreationReplay}).
 *
 * <p>Format: records one after the other, each {@code int length, int crc32c, payload}; the payload
 * an entry count, then entries ({@link Entry}; {@link JournalRecords}). A torn tail (a short record or one whose checksum
 * fails: a crash during an append that was therefore never answered) ends the read and is cut off.
 * The file is made (and its directory fsynced) at open, so an append fsyncs the file only. While topics stay pending
 * it is rewritten now and then to their records alone ({@link #rewrite}: a new file renamed over it).
 *
 * <p>Threading: the admin agent only (and the starting thread before the agent starts).
 */
public final class CreationJournal implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(CreationJournal.class);
    /** The journal's name in the first log directory (a plain file: the log loader lists directories only). */
    public static final String FILE_NAME = "ferrite-topic-creations.journal";
    /** A rewrite's new file until it is renamed over the journal (one left by a crash is deleted at open). */
    static final String REWRITE_NAME = FILE_NAME + ".rewrite";
    private static final int HEADER = JournalRecords.HEADER;
    private static final int MAX_RECORD = JournalRecords.MAX_RECORD;

    /** What an entry does. */
    public enum Kind
    {
        /** A topic created: its name, id, partition count and config overrides as stored. */
        CREATE,
        /** Partitions added to a topic, up to {@link Entry#partitions}. */
        GROW,
        /** A topic deleted: every earlier entry of the same id is void (see {@link CreationReplay}). */
        DELETE,
        /**
         * A topic's config overrides changed while it was made in slices, to {@link Entry#configs}: its partitions made
         * before are changed, the ones made after are made with them ({@link LargeTopicChanges}).
         */
        CONFIG
    }

    /** One topic's change in a record. */
    public record Entry(Kind kind, String name, long idMsb, long idLsb, int partitions, Map<String, String> configs)
    {
    }

    /** How the file is opened (a test's may fail on demand). */
    interface Opener
    {
        FileChannel open(Path file, OpenOption... options) throws IOException;
    }

    private final Path file;
    private final Opener opener;
    /** Reopened when an interrupt closed it (an interruptible channel closes for good on one). */
    private FileChannel channel;
    private final List<Entry> entries;
    /** Bytes of intact records (where the next append goes). */
    private long size;
    /** A record's files failed to be made: the journal is not emptied until a start makes them. */
    private boolean unmade;
    /** Bytes past {@link #size} may be in the file (a failed append whose cut-off failed too): cut off before the next append. */
    private boolean tail;
    /** An emptying whose fsync failed: the old records may still be on disk, so the journal does not count as empty. */
    private boolean emptyingUnsynced;
    /** The log directories whose partitions the records name (where a failed creation's leftovers are looked for). */
    private List<Path> logDirs;
    /** The size the last rewrite left (0 after an emptying): the next rewrite waits until the journal is twice that. */
    private long rewrittenSize;
    /** A rewrite's rename is not known durable (its directory fsync failed): the next append fsyncs the directory. */
    private boolean renameUnsynced;

    private CreationJournal(final Path file, final Opener opener, final FileChannel channel, final List<Entry> entries,
        final long size)
    {
        this.file = file;
        this.opener = opener;
        this.channel = channel;
        this.entries = entries;
        this.size = size;
        this.logDirs = List.of(file.getParent());
    }

    /** The log directories whose partitions the records name (the journal's own, unless a start said otherwise). */
    List<Path> logDirs()
    {
        return logDirs;
    }

    void logDirs(final List<Path> dirs)
    {
        logDirs = List.copyOf(dirs);
    }

    /** Opens (or makes, durably) the journal in {@code dir}; its intact records are {@link #entries}, a torn tail cut off. */
    public static CreationJournal open(final Path dir) throws IOException
    {
        return open(dir, FileChannel::open);
    }

    static CreationJournal open(final Path dir, final Opener opener) throws IOException
    {
        final Path file = dir.resolve(FILE_NAME);
        if (Files.deleteIfExists(dir.resolve(REWRITE_NAME))) // a crash during a rewrite, before its rename: the journal is whole
        {
            LOG.warn("{}: an unfinished rewrite deleted (the journal keeps every record)", dir.resolve(REWRITE_NAME));
        }
        final boolean existed = Files.exists(file);
        final FileChannel channel = opener.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try
        {
            if (!existed)
            {
                channel.force(true);
                io.ferrite.log.config.DurableFile.fsyncDirectory(dir);
            }
            final List<Entry> entries = new ArrayList<>();
            final long intact = read(channel, entries);
            if (intact < channel.size())
            {
                LOG.warn("{}: a torn record after byte {} (of {}) cut off: its request was never answered", file, intact, channel.size());
                channel.truncate(intact);
                channel.force(true);
            }
            return new CreationJournal(file, opener, channel, entries, intact);
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    /** Reads the intact records into {@code into}; returns where they end. */
    private static long read(final FileChannel channel, final List<Entry> into) throws IOException
    {
        final long length = channel.size();
        long at = 0;
        final ByteBuffer header = ByteBuffer.allocate(HEADER);
        while (at + HEADER <= length)
        {
            header.clear();
            readFully(channel, header, at);
            final int size = header.getInt(0);
            final int crc = header.getInt(4);
            if (size <= 0 || size > MAX_RECORD || at + HEADER + size > length)
            {
                break;
            }
            final ByteBuffer payload = ByteBuffer.allocate(size);
            readFully(channel, payload, at + HEADER);
            final CRC32C check = new CRC32C();
            check.update(payload.array(), 0, size);
            if ((int)check.getValue() != crc)
            {
                break;
            }
            into.addAll(JournalRecords.decode(payload.array()));
            at += HEADER + size;
        }
        return at;
    }

    private static void readFully(final FileChannel channel, final ByteBuffer buffer, final long position) throws IOException
    {
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer, position + buffer.position()) < 0)
            {
                throw new IOException("unexpected end of the creation journal");
            }
        }
    }

    /** The entries of the intact records, oldest first (what a start-up replays). */
    public List<Entry> entries()
    {
        return List.copyOf(entries);
    }

    /**
     * Whether a replay of the journal would still act on topic id {@code idMsb}/{@code idLsb}: an entry of it since its
     * last DELETE (a CREATE, GROW or CONFIG of a topic that may be partly made at a start).
     */
    boolean holds(final long idMsb, final long idLsb)
    {
        boolean held = false;
        for (final Entry e : entries)
        {
            if (e.idMsb() == idMsb && e.idLsb() == idLsb)
            {
                held = e.kind() != Kind.DELETE;
            }
        }
        return held;
    }

    /** Bytes of intact records. */
    public long size()
    {
        return size;
    }

    /** What the last rewrite left (0 after an emptying, or before any rewrite). */
    long rewrittenSize()
    {
        return rewrittenSize;
    }

    /** Whether a record's files failed ({@link #unmade}): the journal is neither emptied nor rewritten until a start. */
    boolean isUnmade()
    {
        return unmade;
    }

    /** No record in the journal, durably (an emptying whose fsync failed does not count). */
    public boolean isEmpty()
    {
        return size == 0 && !emptyingUnsynced;
    }

    /**
     * Appends one record of {@code record}'s entries and fsyncs it: durable on return. On a failure no whole record
     * is left: the file is cut back to where the record began (and fsynced); should that fail too, the next append
     * first cuts it (and fails while it cannot), so a record answered as failed is never replayed by a later start
     * unless the process dies before then.
     */
    public void append(final List<Entry> record) throws IOException
    {
        final ByteBuffer buffer = JournalRecords.frame(record);
        boolean interrupted = Thread.interrupted(); // an interrupt closes the channel: taken, restored on return
        try
        {
            if (tail)
            {
                cutOff();
            }
            long at = size;
            try
            {
                final FileChannel c = channel();
                while (buffer.hasRemaining())
                {
                    at += c.write(buffer, at);
                }
                c.force(false); // the file's length is part of its data for fdatasync
                if (renameUnsynced) // the file this record is in must be the journal after a power loss too
                {
                    io.ferrite.log.config.DurableFile.fsyncDirectory(file.getParent());
                    renameUnsynced = false;
                }
            }
            catch (final IOException ex)
            {
                // refused, so answered as an error: no whole record may stay behind
                tail = true;
                interrupted |= Thread.interrupted(); // one that came mid-way (and closed the channel, reopened now)
                try
                {
                    cutOff();
                }
                catch (final IOException cut)
                {
                    ex.addSuppressed(cut);
                }
                throw ex;
            }
            size = at;
            emptyingUnsynced = false; // the fdatasync made the file's new length durable
            entries.addAll(record);
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The file cut back to {@link #size}, durably; {@link #tail} cleared once it is. */
    private void cutOff() throws IOException
    {
        final FileChannel c = channel();
        c.truncate(size);
        c.force(true);
        tail = false;
    }

    /** The channel, reopened when something (an interrupt from another thread) closed it. */
    private FileChannel channel() throws IOException
    {
        if (!channel.isOpen())
        {
            LOG.warn("{}: the channel was closed (an interrupt): reopened", file);
            channel = opener.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        return channel;
    }

    /**
     * Before a deletion renames a file of topic {@code name}: when the journal may hold records (on disk too), a
     * DELETE of its id appended (fsynced), so that a replay does not make it again ({@link CreationReplay}); nothing
     * when it is durably empty.
     */
    public void deleting(final String name, final long idMsb, final long idLsb) throws IOException
    {
        if (!isEmpty() || unmade)
        {
            append(List.of(new Entry(Kind.DELETE, name, idMsb, idLsb, 0, Map.of())));
        }
    }

    /** The files of a record in the journal could not be made: it stays (and every later one) until a start makes them. */
    public void unmade()
    {
        unmade = true;
    }

    /**
     * Empties the journal, durably, once every record in it is reflected in the partitions' own files
     * (ftruncate and fsync: a crash leaves the old records, whose replay then makes nothing) — unless
     * a record's files failed ({@link #unmade}): then nothing. When the fsync fails the journal is empty
     * for the next append (which starts at 0) but not {@link #isEmpty}: deletions still journal themselves.
     */
    public void clear() throws IOException
    {
        if (isEmpty() || unmade)
        {
            return;
        }
        final boolean interrupted = Thread.interrupted();
        try
        {
            final FileChannel c = channel();
            c.truncate(0);
            size = 0; // the next append starts where the file now ends
            rewrittenSize = 0;
            tail = false;
            entries.clear();
            emptyingUnsynced = true;
            c.force(true);
            if (renameUnsynced) // a power loss could bring back the file a rewrite replaced: the directory first
            {
                io.ferrite.log.config.DurableFile.fsyncDirectory(file.getParent());
                renameUnsynced = false;
            }
            emptyingUnsynced = false;
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Replaces every record by one of {@code kept} — the entries still wanted, as a replay would read them — atomically:
     * written to {@value #REWRITE_NAME} and fsynced, renamed over the journal, the directory fsynced. A crash before the
     * rename leaves the old journal (its records replay to the same topics; the new file is deleted at open), after it
     * the new one. Should the directory's fsync fail, the journal is the new file from here on and the next append
     * fsyncs the directory before it returns (as does an emptying): then false. On a failure before the rename (the new
     * file's write, fsync, close, or the rename itself) an IOException and nothing changes, and the next rewrite waits
     * until the journal has doubled. Once the rename returned, the journal is the new file whatever fails after it.
     */
    boolean rewrite(final List<Entry> kept) throws IOException
    {
        final ByteBuffer buffer = JournalRecords.frame(kept);
        final long length = buffer.remaining();
        if (length - HEADER > MAX_RECORD) // a read would take it for a garbage tail: never written
        {
            rewrittenSize = size;
            throw new IOException("a rewrite of " + kept.size() + " entries is one record of " + length + " bytes, more than a read takes");
        }
        final Path next = file.resolveSibling(REWRITE_NAME);
        final boolean interrupted = Thread.interrupted();
        try
        {
            try
            {
                try (FileChannel c = opener.open(next, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE))
                {
                    long at = 0;
                    while (buffer.hasRemaining())
                    {
                        at += c.write(buffer, at);
                    }
                    c.force(true);
                } // closed before the rename: a failing close is a failure before it
                Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            catch (final IOException ex)
            {
                rewrittenSize = size; // not again before the journal has doubled
                Files.deleteIfExists(next);
                throw ex;
            }
            // the journal is the new file now, whatever fails after this
            size = length;
            rewrittenSize = length;
            tail = false; // bytes a failed append left past the intact records went with the old file
            emptyingUnsynced = false;
            entries.clear();
            entries.addAll(kept);
            renameUnsynced = true;
            try
            {
                try
                {
                    channel.close(); // the old file's
                }
                finally
                {
                    // should this fail, the closed channel is reopened, on the new file, at its next use (channel())
                    channel = opener.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                }
                io.ferrite.log.config.DurableFile.fsyncDirectory(file.getParent());
                renameUnsynced = false;
                return true;
            }
            catch (final IOException ex)
            {
                LOG.warn("{}: rewritten, but reopening it or fsyncing its directory failed: the next append or emptying "
                    + "fsyncs the directory first", file, ex);
                return false;
            }
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    public Path file()
    {
        return file;
    }

    @Override
    public void close() throws IOException
    {
        channel.close();
    }
}
