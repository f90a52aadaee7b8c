package io.ferrite.broker.admin;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The single-node broker's durable record of the topic creations it has answered and not yet made
 * whole in the partitions' own files: what Kafka's metadata log is to its controller, for one node.
 * A CreateTopics (or CreatePartitions) request is answered once its one record is appended and
 * fsynced here; the admin agent then makes the partitions' files, before it takes its next command,
 * and empties the journal once every record in it is reflected in those files. A start-up after a
 * crash between the answer and the files replays what is left ({@link CreationReplay}).
 *
 * <p>Format: records one after the other, each {@code int length, int crc32c, payload}; the payload
 * an entry count, then entries ({@link Entry}). A torn tail (a short record or one whose checksum
 * fails: a crash during an append that was therefore never answered) ends the read and is cut off.
 * The file is made (and its directory fsynced) at open, so an append fsyncs the file only.
 *
 * <p>Threading: the admin agent only (and the starting thread before the agent starts).
 */
public final class CreationJournal implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(CreationJournal.class);
    /** The journal's name in the first log directory (a plain file: the log loader lists directories only). */
    public static final String FILE_NAME = "ferrite-topic-creations.journal";
    private static final int HEADER = 8;
    private static final int MAX_RECORD = 64 << 20;

    /** What an entry does. */
    public enum Kind
    {
        /** A topic created: its name, id, partition count and config overrides as stored. */
        CREATE,
        /** Partitions added to a topic, up to {@link Entry#partitions}. */
        GROW,
        /** A topic deleted: every earlier entry of the same id is void (see {@link CreationReplay}). */
        DELETE
    }

    /** One topic's change in a record. */
    public record Entry(Kind kind, String name, long idMsb, long idLsb, int partitions, Map<String, String> configs)
    {
    }

    private final Path file;
    private final FileChannel channel;
    private final List<Entry> entries;
    /** Bytes of intact records (where the next append goes). */
    private long size;
    /** A record's files failed to be made: the journal is not emptied until a start makes them. */
    private boolean unmade;

    private CreationJournal(final Path file, final FileChannel channel, final List<Entry> entries, final long size)
    {
        this.file = file;
        this.channel = channel;
        this.entries = entries;
        this.size = size;
    }

    /** Opens (or makes, durably) the journal in {@code dir}; its intact records are {@link #entries}, a torn tail cut off. */
    public static CreationJournal open(final Path dir) throws IOException
    {
        final Path file = dir.resolve(FILE_NAME);
        final boolean existed = Files.exists(file);
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
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
            return new CreationJournal(file, channel, entries, intact);
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
            into.addAll(decode(payload.array()));
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

    public boolean isEmpty()
    {
        return size == 0;
    }

    /** Appends one record of {@code record}'s entries and fsyncs it: durable on return. */
    public void append(final List<Entry> record) throws IOException
    {
        final byte[] payload = encode(record);
        final CRC32C crc = new CRC32C();
        crc.update(payload, 0, payload.length);
        final ByteBuffer buffer = ByteBuffer.allocate(HEADER + payload.length);
        buffer.putInt(payload.length).putInt((int)crc.getValue()).put(payload).flip();
        long at = size;
        try
        {
            while (buffer.hasRemaining())
            {
                at += channel.write(buffer, at);
            }
            channel.force(false); // the file's length is part of its data for fdatasync
        }
        catch (final IOException ex)
        {
            // refused, so answered as an error: cut it off again (best effort; else the next append overwrites it)
            try
            {
                channel.truncate(size);
            }
            catch (final IOException cut)
            {
                ex.addSuppressed(cut);
            }
            throw ex;
        }
        size = at;
        entries.addAll(record);
    }

    /**
     * Before a deletion renames a file of topic {@code name}: when the journal holds records, a DELETE of its id
     * appended (fsynced), so that a replay does not make it again ({@link CreationReplay}); nothing when it is empty.
     */
    public void deleting(final String name, final long idMsb, final long idLsb) throws IOException
    {
        if (size > 0)
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
     * a record's files failed ({@link #unmade}): then nothing.
     */
    public void clear() throws IOException
    {
        if (size == 0 || unmade)
        {
            return;
        }
        channel.truncate(0);
        size = 0; // before the fsync: should it fail, the next append still starts where the file now ends
        entries.clear();
        channel.force(true);
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

    private static byte[] encode(final List<Entry> record) throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            out.writeInt(record.size());
            for (final Entry e : record)
            {
                out.writeByte(e.kind().ordinal());
                out.writeUTF(e.name());
                out.writeLong(e.idMsb());
                out.writeLong(e.idLsb());
                out.writeInt(e.partitions());
                out.writeInt(e.configs().size());
                for (final Map.Entry<String, String> c : e.configs().entrySet())
                {
                    out.writeUTF(c.getKey());
                    out.writeUTF(c.getValue());
                }
            }
        }
        return bytes.toByteArray();
    }

    private static List<Entry> decode(final byte[] payload) throws IOException
    {
        final DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
        final int count = in.readInt();
        final List<Entry> record = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final Kind kind = Kind.values()[in.readUnsignedByte()];
            final String name = in.readUTF();
            final long msb = in.readLong();
            final long lsb = in.readLong();
            final int partitions = in.readInt();
            final int configCount = in.readInt();
            final Map<String, String> configs = new LinkedHashMap<>();
            for (int c = 0; c < configCount; c++)
            {
                configs.put(in.readUTF(), in.readUTF());
            }
            record.add(new Entry(kind, name, msb, lsb, partitions, Map.copyOf(configs)));
        }
        return record;
    }
}
