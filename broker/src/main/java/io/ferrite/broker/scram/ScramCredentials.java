package io.ferrite.broker.scram;

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
    private volatile Map<String, Map<ScramMechanism, ScramCredential>> credentials = Map.of();
    /** Null until loaded (then nothing is written: a broker that has not read its file must not replace it). */
    private volatile Path file;

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
     * The single writer's (the admin agent's): writes {@code next} to the file durably, then publishes it.
     *
     * @throws IOException when the file could not be written: nothing is published
     */
    public void replace(final Map<String, Map<ScramMechanism, ScramCredential>> next) throws IOException
    {
        final Path f = file;
        if (f == null)
        {
            throw new IOException("the SCRAM credentials were not loaded");
        }
        final Map<String, Map<ScramMechanism, ScramCredential>> frozen = freeze(next);
        ScramCredentialsFile.write(f, frozen);
        credentials = frozen;
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
