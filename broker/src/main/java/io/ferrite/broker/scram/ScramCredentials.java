package io.ferrite.broker.scram;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * The broker's SCRAM credentials (every listener's: Kafka keeps them cluster-wide, not per listener): an immutable
 * snapshot behind a volatile reference, read by any thread — the network threads' SCRAM exchanges, DescribeUserScramCredentials
 * — and replaced by one writer at a time, the admin agent running an AlterUserScramCredentials, which writes the file
 * ({@link ScramCredentialsFile}) before it publishes: a login sees a credential only once it would survive a crash.
 * Made empty before the listeners are bound, {@link #load loaded} once the log directory is the broker's, before a
 * connection is served.
 */
public final class ScramCredentials
{
    /** Makes a directory's entries durable: {@link DurableFile#fsyncDirectory}, or a failing one in a test. */
    @FunctionalInterface
    interface DirectorySync
    {
        void fsync(Path dir) throws IOException;
    }

    /** The file was replaced and its content is in effect, but its directory could not be fsynced: a crash may undo the change. */
    public static final class NotDurableException extends IOException
    {
        private static final long serialVersionUID = 1L;

        NotDurableException(final IOException cause)
        {
            super("the credentials' file was replaced but its directory could not be fsynced: " + cause, cause);
        }
    }

    private final DirectorySync directorySync;
    private volatile Map<String, Map<ScramMechanism, ScramCredential>> credentials = Map.of();
    /** Null until loaded (then nothing is written: a broker that has not read its file must not replace it). */
    private volatile Path file;

    public ScramCredentials()
    {
        this(DurableFile::fsyncDirectory);
    }

    ScramCredentials(final DirectorySync directorySync)
    {
        this.directorySync = directorySync;
    }

    /** The credentials' file of a broker whose first log directory is {@code dir}. */
    public static Path fileIn(final Path dir)
    {
        return dir.resolve(ScramCredentialsFile.FILE);
    }

    /** Reads {@code dir}'s credentials file, if there is one. */
    public void load(final Path dir) throws IOException
    {
        final Path f = fileIn(dir);
        credentials = freeze(ScramCredentialsFile.read(f));
        file = f;
    }

    /** The credential of {@code user} for {@code mechanism}, or null: none. */
    public ScramCredential lookup(final ScramMechanism mechanism, final String user)
    {
        final Map<ScramMechanism, ScramCredential> byMechanism = credentials.get(user);
        return byMechanism == null ? null : byMechanism.get(mechanism);
    }

    /** Every credential now (immutable). */
    public Map<String, Map<ScramMechanism, ScramCredential>> snapshot()
    {
        return credentials;
    }

    /**
     * The single writer's (the admin agent's): writes {@code next} to the file, publishes it once the file holds it (after
     * the rename), then fsyncs the directory. The answer to the client waits for all of it.
     *
     * @throws NotDurableException when the directory fsync failed: {@code next} is published and in the file, maybe not durably
     * @throws IOException when the file could not be replaced: nothing is published
     */
    public void replace(final Map<String, Map<ScramMechanism, ScramCredential>> next) throws IOException
    {
        final Path f = file;
        if (f == null)
        {
            throw new IOException("the SCRAM credentials were not loaded");
        }
        final Map<String, Map<ScramMechanism, ScramCredential>> frozen = freeze(next);
        ScramCredentialsFile.writeContent(f, frozen); // throws: the old file stands, nothing changed
        credentials = frozen; // the file holds it now, durable or not: memory says what the next start would read
        try
        {
            directorySync.fsync(f.getParent());
        }
        catch (final IOException ex)
        {
            throw new NotDurableException(ex);
        }
    }

    private static Map<String, Map<ScramMechanism, ScramCredential>> freeze(final Map<String, Map<ScramMechanism, ScramCredential>> map)
    {
        final Map<String, Map<ScramMechanism, ScramCredential>> frozen = new HashMap<>();
        map.forEach((user, byMechanism) ->
        {
            if (!byMechanism.isEmpty()) // a user without a credential is no user (and EnumMap cannot copy an empty plain map)
            {
                frozen.put(user, Collections.unmodifiableMap(new EnumMap<>(byMechanism)));
            }
        });
        return Collections.unmodifiableMap(frozen);
    }
}
