package io.ferrite.broker.acl;

import io.ferrite.broker.SealedFile;
import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The ACLs' file, {@value #FILE} in the first log directory: every ACL, replaced whole at each change through
 * {@link DurableFile} (a temporary file written and fsynced, renamed over the old one; the caller fsyncs the
 * directory), so a crash leaves the old set or the new one. ACL changes are rare administrative acts and a broker
 * holds hundreds to a few thousand ACLs (tens of bytes each): a rewrite is cheap next to a journal; a single node has
 * no metadata log to hold Kafka's {@code AccessControlEntryRecord}s.
 *
 * <pre>
 *   0        4        8        12
 *   +--------+--------+--------+
 *   | magic  |version | count  |   magic "FACL", version 1, number of ACLs
 *   +--------+--------+--------+
 *   | ACL x count              |   resource type, pattern type, operation, permission: 1 byte each;
 *   |  ...                     |   resource name, principal, host: int length + UTF-8 each
 *   +--------+-----------------+
 *   | CRC32C |                     of every byte before it
 *   +--------+
 * </pre>
 *
 * Read back whole or refused: a short file, a bad checksum, an unknown version or code is an {@link IOException} and the
 * broker does not start on it — a damaged ACL file read as empty would deny everyone everything (or, with
 * {@code allow.everyone.if.no.acl.found}, allow everyone everything) without a word.
 */
final class AclsFile
{
    static final String FILE = "ferrite-acls";
    private static final int MAGIC = 0x4641434c; // "FACL"
    private static final int VERSION = 1;
    private static final int CODES_LENGTH = 4;

    private AclsFile()
    {
    }

    /** The ACLs in {@code file}, none when it does not exist. */
    static List<AclBinding> read(final Path file) throws IOException
    {
        return SealedFile.read(file, List.of(), AclsFile::decode);
    }

    /** Replaces {@code file} with {@code acls}, the content fsynced before the rename; the directory is the caller's to fsync. */
    static void writeContent(final Path file, final Collection<AclBinding> acls) throws IOException
    {
        DurableFile.writeContent(file, encode(acls));
    }

    static byte[] encode(final Collection<AclBinding> acls)
    {
        final List<byte[]> strings = new ArrayList<>(acls.size() * 3);
        int length = 0;
        for (final AclBinding acl : acls)
        {
            length += CODES_LENGTH;
            for (final String s : List.of(acl.resourceName(), acl.principal(), acl.host()))
            {
                final byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
                strings.add(bytes);
                length += 4 + bytes.length;
            }
        }
        final ByteBuffer buffer = SealedFile.start(length, MAGIC, VERSION, acls.size());
        int s = 0;
        for (final AclBinding acl : acls)
        {
            buffer.put(acl.resourceType()).put(acl.patternType()).put(acl.operation()).put(acl.permission());
            for (int i = 0; i < 3; i++)
            {
                final byte[] bytes = strings.get(s++);
                buffer.putInt(bytes.length).put(bytes);
            }
        }
        return SealedFile.seal(buffer);
    }

    private static List<AclBinding> decode(final ByteBuffer buffer)
    {
        final int count = SealedFile.open(buffer, MAGIC, VERSION, "an ACL file");
        final List<AclBinding> acls = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            final byte type = buffer.get();
            final byte pattern = buffer.get();
            final byte operation = buffer.get();
            final byte permission = buffer.get();
            if (!AclRules.creatable(type, pattern, operation, permission))
            {
                throw new IllegalArgumentException("ACL " + i + " has codes no ACL has (" + type + ", " + pattern + ", " + operation
                    + ", " + permission + ")");
            }
            acls.add(new AclBinding(type, SealedFile.string(buffer), pattern, SealedFile.string(buffer), SealedFile.string(buffer),
                operation, permission));
        }
        if (buffer.hasRemaining())
        {
            throw new IllegalArgumentException(buffer.remaining() + " bytes after the last ACL");
        }
        return acls;
    }
}
