package io.ferrite.broker;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The frame of the broker's small state files rewritten whole (the SCRAM credentials, the ACLs): a header — magic,
 * version, count of entries, 4 bytes each — the entries, and a CRC32C of every byte before it. Each file's class lays
 * out its entries; this one writes and checks the frame, so a short file, a flipped bit, another file's magic or an
 * unknown version is refused the same way for all of them.
 */
public final class SealedFile
{
    public static final int HEADER_LENGTH = 12;
    public static final int CRC_LENGTH = 4;

    private SealedFile()
    {
    }

    /** A buffer of {@code entriesLength} bytes of entries and the frame, its header written: the entries go next. */
    public static ByteBuffer start(final int entriesLength, final int magic, final int version, final int count)
    {
        return ByteBuffer.allocate(HEADER_LENGTH + entriesLength + CRC_LENGTH).putInt(magic).putInt(version).putInt(count);
    }

    /** Appends the checksum of what {@code buffer} holds (its entries written) and returns the file's bytes. */
    public static byte[] seal(final ByteBuffer buffer)
    {
        final CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 0, buffer.position());
        buffer.putInt((int)crc.getValue());
        return buffer.array();
    }

    /**
     * Checks the frame of {@code buffer} (a whole file) and returns its count of entries, the buffer then positioned at
     * the first entry and limited before the checksum.
     *
     * @throws IllegalArgumentException saying what is wrong: short, checksum, magic, version
     */
    public static int open(final ByteBuffer buffer, final int magic, final int version, final String what)
    {
        if (buffer.remaining() < HEADER_LENGTH + CRC_LENGTH)
        {
            throw new IllegalArgumentException("shorter than its header (" + buffer.remaining() + " bytes)");
        }
        final CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 0, buffer.limit() - CRC_LENGTH);
        if ((int)crc.getValue() != buffer.getInt(buffer.limit() - CRC_LENGTH))
        {
            throw new IllegalArgumentException("checksum mismatch");
        }
        buffer.limit(buffer.limit() - CRC_LENGTH);
        if (buffer.getInt() != magic)
        {
            throw new IllegalArgumentException("not " + what + " (bad magic)");
        }
        final int found = buffer.getInt();
        if (found != version)
        {
            throw new IllegalArgumentException("unknown version " + found);
        }
        return buffer.getInt();
    }

    /** Reads a whole file's entries (its frame checked by {@link #open}). */
    @FunctionalInterface
    public interface Decoder<T>
    {
        /** @throws IllegalArgumentException or BufferUnderflowException: what is wrong with the bytes */
        T decode(ByteBuffer file);
    }

    /**
     * The content of {@code file} as {@code decoder} reads it, {@code absent} when there is no file.
     *
     * @throws IOException "damaged: ..." for a file the decoder refuses (never its content), or the read's failure
     */
    public static <T> T read(final Path file, final T absent, final Decoder<T> decoder) throws IOException
    {
        if (!Files.exists(file))
        {
            return absent;
        }
        final ByteBuffer buffer = ByteBuffer.wrap(Files.readAllBytes(file));
        try
        {
            return decoder.decode(buffer);
        }
        catch (final BufferUnderflowException | IllegalArgumentException ex)
        {
            throw new IOException("damaged: " + (ex.getMessage() == null ? "cut short" : ex.getMessage()));
        }
    }

    /** A string of an entry: int length, then UTF-8, the length bounded by what remains of the file. */
    public static String string(final ByteBuffer buffer)
    {
        final int length = buffer.getInt();
        if (length < 0 || length > buffer.remaining())
        {
            throw new IllegalArgumentException("a string of " + length + " bytes where " + buffer.remaining() + " remain");
        }
        final String s = new String(buffer.array(), buffer.position(), length, StandardCharsets.UTF_8);
        buffer.position(buffer.position() + length);
        return s;
    }
}
