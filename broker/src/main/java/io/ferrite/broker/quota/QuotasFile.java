package io.ferrite.broker.quota;

import io.ferrite.broker.SealedFile;
import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client quotas' file, {@value #FILE} in the first log directory: every quota value, replaced whole at each change
 * through {@link DurableFile} (a temporary file written and fsynced, renamed over the old one; the caller fsyncs the
 * directory), so a crash leaves the old set or the new one. Quota changes are rare administrative acts on a few
 * hundred entities at most: a rewrite is cheap next to a journal; a single node has no metadata log to hold Kafka's
 * {@code ClientQuotaRecord}s.
 *
 * <pre>
 *   0        4        8        12
 *   +--------+--------+--------+
 *   | magic  |version | count  |   magic "FQUO", version 1, number of quota values
 *   +--------+--------+--------+
 *   | value x count            |   user, client id, ip: 1 byte each (0 absent, 1 the default, 2 named, then its
 *   |  ...                     |   name: int length + UTF-8); key: int length + UTF-8; value: 8-byte double
 *   +--------+-----------------+
 *   | CRC32C |                     of every byte before it
 *   +--------+
 * </pre>
 *
 * Read back whole or refused: a short file, a bad checksum, an unknown version or part is an {@link IOException} and
 * the broker does not start on it — a damaged quota file read as empty would lift every quota without a word.
 */
final class QuotasFile
{
    static final String FILE = "ferrite-client-quotas";
    private static final int MAGIC = 0x4651554f; // "FQUO"
    private static final int VERSION = 1;
    private static final byte ABSENT = 0;
    private static final byte DEFAULT = 1;
    private static final byte NAMED = 2;

    private QuotasFile()
    {
    }

    /** The quotas in {@code file}, none when it does not exist. */
    static Map<QuotaEntity, Map<String, Double>> read(final Path file) throws IOException
    {
        return SealedFile.read(file, Map.of(), QuotasFile::decode);
    }

    /** Replaces {@code file} with {@code quotas}, the content fsynced before the rename; the directory is the caller's to fsync. */
    static void writeContent(final Path file, final Map<QuotaEntity, Map<String, Double>> quotas) throws IOException
    {
        DurableFile.writeContent(file, encode(quotas));
    }

    static byte[] encode(final Map<QuotaEntity, Map<String, Double>> quotas)
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int count = 0;
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            for (final Map.Entry<QuotaEntity, Map<String, Double>> e : quotas.entrySet())
            {
                final QuotaEntity entity = e.getKey();
                for (final Map.Entry<String, Double> value : e.getValue().entrySet())
                {
                    count++;
                    part(out, entity.hasUser(), entity.user());
                    part(out, entity.hasClientId(), entity.clientId());
                    part(out, entity.hasIp(), entity.ip());
                    string(out, value.getKey());
                    out.writeDouble(value.getValue());
                }
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex); // a ByteArrayOutputStream does not fail
        }
        final byte[] entries = bytes.toByteArray();
        return SealedFile.seal(SealedFile.start(entries.length, MAGIC, VERSION, count).put(entries));
    }

    private static void part(final DataOutputStream out, final boolean present, final String name) throws IOException
    {
        out.writeByte(!present ? ABSENT : name == null ? DEFAULT : NAMED);
        if (present && name != null)
        {
            string(out, name);
        }
    }

    private static void string(final DataOutputStream out, final String s) throws IOException
    {
        final byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    private static Map<QuotaEntity, Map<String, Double>> decode(final ByteBuffer buffer)
    {
        final int count = SealedFile.open(buffer, MAGIC, VERSION, "a client quotas file");
        final Map<QuotaEntity, Map<String, Double>> quotas = new LinkedHashMap<>();
        for (int i = 0; i < count; i++)
        {
            final byte userKind = kind(buffer, i);
            final String user = userKind == NAMED ? SealedFile.string(buffer) : null;
            final byte clientKind = kind(buffer, i);
            final String clientId = clientKind == NAMED ? SealedFile.string(buffer) : null;
            final byte ipKind = kind(buffer, i);
            final String ip = ipKind == NAMED ? SealedFile.string(buffer) : null;
            final QuotaEntity entity = new QuotaEntity(userKind != ABSENT, user, clientKind != ABSENT, clientId, ipKind != ABSENT, ip);
            final String key = SealedFile.string(buffer);
            final double value = buffer.getDouble();
            if (QuotaKeys.type(entity, key) == null || !(value > 0) || Double.isInfinite(value))
            {
                throw new IllegalArgumentException("quota value " + i + " is not one Kafka stores (" + key + " = " + value + ")");
            }
            quotas.computeIfAbsent(entity, k -> new LinkedHashMap<>()).put(key, value);
        }
        if (buffer.hasRemaining())
        {
            throw new IllegalArgumentException(buffer.remaining() + " bytes after the last quota value");
        }
        final Map<QuotaEntity, Map<String, Double>> frozen = new LinkedHashMap<>();
        quotas.forEach((entity, values) -> frozen.put(entity, Collections.unmodifiableMap(values)));
        return Collections.unmodifiableMap(frozen);
    }

    private static byte kind(final ByteBuffer buffer, final int i)
    {
        final byte kind = buffer.get();
        if (kind != ABSENT && kind != DEFAULT && kind != NAMED)
        {
            throw new IllegalArgumentException("quota value " + i + " has an entity part of unknown kind " + kind);
        }
        return kind;
    }
}
