package io.ferrite.broker.scram;

import io.ferrite.broker.SealedFile;
import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The SCRAM credentials' file, {@value #FILE} in the first log directory: every credential, replaced whole at each
 * change through {@link DurableFile} (a temporary file fsynced, renamed over the old one, the directory fsynced), so a
 * crash or a power loss leaves the old set or the new one. Changes are rare and small (one user at a time, a few
 * hundred bytes each), so rewriting the whole file costs nothing worth a journal; a single node has no metadata log to
 * hold Kafka's {@code UserScramCredentialRecord}s.
 *
 * <pre>
 *   0        4        8        12
 *   +--------+--------+--------+
 *   | magic  |version | count  |   magic "FSCR", version 1, number of credentials
 *   +--------+--------+--------+
 *   | credential x count       |   user: int length + UTF-8, mechanism type: 1 byte, iterations: int,
 *   |  ...                     |   salt, StoredKey, ServerKey: int length + bytes each
 *   +--------+-----------------+
 *   | CRC32C |                     of every byte before it
 *   +--------+
 * </pre>
 *
 * Read back whole or refused: a short file, a bad checksum, an unknown version or mechanism is an {@link IOException}
 * naming the file (never its content), and the broker does not start on it — a damaged credential file is not an
 * empty one, which would lock every SCRAM user out without a word.
 */
final class ScramCredentialsFile
{
    static final String FILE = "ferrite-scram-credentials";
    private static final int MAGIC = 0x46534352; // "FSCR"
    private static final int VERSION = 1;

    private ScramCredentialsFile()
    {
    }

    /** The credentials in {@code file}, or none when it does not exist. */
    static Map<String, Map<ScramMechanism, ScramCredential>> read(final Path file) throws IOException
    {
        return SealedFile.read(file, Map.of(), ScramCredentialsFile::decode);
    }

    /**
     * Replaces {@code file} with {@code credentials}, the content fsynced before the rename; its directory is not fsynced
     * here (the caller's next step: {@link DurableFile#fsyncDirectory}), so that the caller knows whether the rename was made.
     */
    static void writeContent(final Path file, final Map<String, Map<ScramMechanism, ScramCredential>> credentials) throws IOException
    {
        DurableFile.writeContent(file, encode(credentials));
    }

    static byte[] encode(final Map<String, Map<ScramMechanism, ScramCredential>> credentials)
    {
        int count = 0;
        int length = 0;
        for (final Map.Entry<String, Map<ScramMechanism, ScramCredential>> user : credentials.entrySet())
        {
            final int nameLength = user.getKey().getBytes(StandardCharsets.UTF_8).length;
            for (final ScramCredential c : user.getValue().values())
            {
                count++;
                length += 4 + nameLength + 1 + 4 + 4 + c.salt().length + 4 + c.storedKey().length + 4 + c.serverKey().length;
            }
        }
        final ByteBuffer buffer = SealedFile.start(length, MAGIC, VERSION, count);
        credentials.forEach((user, byMechanism) ->
        {
            final byte[] name = user.getBytes(StandardCharsets.UTF_8);
            byMechanism.forEach((mechanism, c) ->
            {
                buffer.putInt(name.length).put(name).put(mechanism.type()).putInt(c.iterations());
                buffer.putInt(c.salt().length).put(c.salt()).putInt(c.storedKey().length).put(c.storedKey())
                    .putInt(c.serverKey().length).put(c.serverKey());
            });
        });
        return SealedFile.seal(buffer);
    }

    private static Map<String, Map<ScramMechanism, ScramCredential>> decode(final ByteBuffer buffer)
    {
        final int count = SealedFile.open(buffer, MAGIC, VERSION, "a credentials file");
        final Map<String, Map<ScramMechanism, ScramCredential>> credentials = new LinkedHashMap<>();
        for (int i = 0; i < count; i++)
        {
            final String user = new String(field(buffer), StandardCharsets.UTF_8);
            final byte type = buffer.get();
            final ScramMechanism mechanism = ScramMechanism.forType(type);
            if (mechanism == null)
            {
                throw new IllegalArgumentException("unknown mechanism type " + type + " in credential " + i);
            }
            final int iterations = buffer.getInt();
            final ScramCredential c = new ScramCredential(field(buffer), field(buffer), field(buffer), iterations);
            credentials.computeIfAbsent(user, u -> new EnumMap<>(ScramMechanism.class)).put(mechanism, c);
        }
        if (buffer.hasRemaining())
        {
            throw new IllegalArgumentException(buffer.remaining() + " bytes after the last credential");
        }
        return credentials;
    }

    private static byte[] field(final ByteBuffer buffer)
    {
        final int length = buffer.getInt();
        // bounded by what remains of the file, read whole: no other bound, so the reader takes every field the writer wrote
        // (Kafka 4.4 bounds no salt; AlterUserScramCredentials is bounded only by socket.request.max.bytes)
        if (length < 0 || length > buffer.remaining())
        {
            throw new IllegalArgumentException("a field of " + length + " bytes where " + buffer.remaining() + " remain");
        }
        final byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }
}
