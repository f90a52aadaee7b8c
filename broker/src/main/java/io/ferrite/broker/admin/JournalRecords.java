package io.ferrite.broker.admin;

import io.ferrite.broker.admin.CreationJournal.Entry;
import io.ferrite.broker.admin.CreationJournal.Kind;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The {@link CreationJournal}'s records as bytes: each {@code int length, int crc32c, payload}; the payload an entry
 * count, then per entry its kind, name, id, partition count and config overrides.
 */
final class JournalRecords
{
    /** A record's length and checksum. */
    static final int HEADER = 8;
    /** The largest payload a read accepts (anything larger is a torn or garbage tail). */
    static final int MAX_RECORD = 64 << 20;

    private JournalRecords()
    {
    }

    /** One record of {@code entries} as it is stored: length, CRC32C, payload; ready to write. */
    static ByteBuffer frame(final List<Entry> entries) throws IOException
    {
        final byte[] payload = encode(entries);
        final CRC32C crc = new CRC32C();
        crc.update(payload, 0, payload.length);
        final ByteBuffer buffer = ByteBuffer.allocate(HEADER + payload.length);
        buffer.putInt(payload.length).putInt((int)crc.getValue()).put(payload).flip();
        return buffer;
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
                writeString(out, e.name());
                out.writeLong(e.idMsb());
                out.writeLong(e.idLsb());
                out.writeInt(e.partitions());
                out.writeInt(e.configs().size());
                for (final Map.Entry<String, String> c : e.configs().entrySet())
                {
                    writeString(out, c.getKey());
                    writeString(out, c.getValue());
                }
            }
        }
        return bytes.toByteArray();
    }

    static List<Entry> decode(final byte[] payload) throws IOException
    {
        final DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
        final int count = in.readInt();
        final List<Entry> record = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final Kind kind = Kind.values()[in.readUnsignedByte()];
            final String name = readString(in);
            final long msb = in.readLong();
            final long lsb = in.readLong();
            final int partitions = in.readInt();
            final int configCount = in.readInt();
            final Map<String, String> configs = new LinkedHashMap<>();
            for (int c = 0; c < configCount; c++)
            {
                configs.put(readString(in), readString(in));
            }
            record.add(new Entry(kind, name, msb, lsb, partitions, Map.copyOf(configs)));
        }
        return record;
    }

    /** A string as its UTF-8 length and bytes (not writeUTF: a config value may be longer than 64 KiB). */
    private static void writeString(final DataOutputStream out, final String value) throws IOException
    {
        final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private static String readString(final DataInputStream in) throws IOException
    {
        final int length = in.readInt();
        if (length < 0 || length > MAX_RECORD)
        {
            throw new IOException("a string of " + length + " bytes in the creation journal");
        }
        final byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
