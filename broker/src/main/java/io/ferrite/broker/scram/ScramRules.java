package io.ferrite.broker.scram;

import io.ferrite.broker.Errors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Kafka 4.4's rules for the credential APIs as pure functions over a snapshot of the credentials: AlterUserScramCredentials
 * as its controller's {@code ScramControlManager.alterCredentials} checks and answers it, DescribeUserScramCredentials as
 * its broker's {@code ScramImage.describe} (both read with javap: the checks, their order, the messages, the order of
 * the results). No thread, no I/O: {@link ScramCredentials} applies an alteration's outcome.
 */
public final class ScramRules
{
    static final String ALTERED_TWICE = "A user credential cannot be altered twice in the same request";

    /** A credential to delete. */
    public record Deletion(String name, byte mechanism)
    {
    }

    /** A credential to add or replace: the client's salt and salted password (Hi, computed by the client). */
    public record Upsertion(String name, byte mechanism, int iterations, byte[] salt, byte[] saltedPassword)
    {
        /** The name, mechanism and iterations only: never the salted password. */
        @Override
        public String toString()
        {
            return "Upsertion(" + name + ", " + mechanism + ", " + iterations + ")";
        }
    }

    /** One user's answer. */
    public record Result(String user, short errorCode, String errorMessage)
    {
    }

    /** An alteration's answers (in Kafka's order) and the credentials after it (the same map when nothing changed). */
    public record Outcome(List<Result> results, Map<String, Map<ScramMechanism, ScramCredential>> credentials)
    {
    }

    /** One user's described credentials: (mechanism type, iterations) pairs, or an error. */
    public record Described(String user, short errorCode, String errorMessage, List<int[]> credentialInfos)
    {
    }

    private ScramRules()
    {
    }

    /**
     * Kafka's alterCredentials: a user named twice (in any mix of deletions and upsertions) is DUPLICATE_RESOURCE; an empty
     * name UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM; deleting a credential that does not
     * exist RESOURCE_NOT_FOUND; iterations outside 4096-16384 UNACCEPTABLE_CREDENTIAL; a salted password the HMAC
     * refuses UNKNOWN_SERVER_ERROR without a message. Answers: the deletions done, the upsertions done, then the errors
     * (each group in the order of Kafka's hash maps, reproduced with the same maps).
     */
    public static Outcome alter(final Map<String, Map<ScramMechanism, ScramCredential>> current, final List<Deletion> deletions,
        final List<Upsertion> upsertions)
    {
        final Map<String, Deletion> toDelete = new HashMap<>();
        final Map<String, Upsertion> toUpsert = new HashMap<>();
        final Map<String, Result> errors = new HashMap<>();
        for (final Deletion d : deletions)
        {
            if (errors.containsKey(d.name()))
            {
                continue;
            }
            if (toDelete.remove(d.name()) != null)
            {
                errors.put(d.name(), new Result(d.name(), Errors.DUPLICATE_RESOURCE, ALTERED_TWICE));
                continue;
            }
            final Result refused = checkDeletion(current, d);
            if (refused != null)
            {
                errors.put(d.name(), refused);
            }
            else
            {
                toDelete.put(d.name(), d);
            }
        }
        for (final Upsertion u : upsertions)
        {
            if (errors.containsKey(u.name()))
            {
                continue;
            }
            if (toDelete.remove(u.name()) != null || toUpsert.remove(u.name()) != null)
            {
                errors.put(u.name(), new Result(u.name(), Errors.DUPLICATE_RESOURCE, ALTERED_TWICE));
                continue;
            }
            final Result refused = checkUpsertion(u);
            if (refused != null)
            {
                errors.put(u.name(), refused);
            }
            else
            {
                toUpsert.put(u.name(), u);
            }
        }
        final List<Result> results = new ArrayList<>();
        final Map<String, Map<ScramMechanism, ScramCredential>> after = copy(current);
        boolean changed = false;
        for (final Deletion d : toDelete.values())
        {
            changed = true;
            results.add(new Result(d.name(), Errors.NONE, null));
            final Map<ScramMechanism, ScramCredential> byMechanism = after.get(d.name());
            byMechanism.remove(ScramMechanism.forType(d.mechanism()));
            if (byMechanism.isEmpty())
            {
                after.remove(d.name());
            }
        }
        for (final Upsertion u : toUpsert.values())
        {
            final ScramMechanism mechanism = ScramMechanism.forType(u.mechanism());
            try
            {
                final ScramCredential credential = ScramCredential.of(mechanism, u.salt(), u.saltedPassword(), u.iterations());
                after.computeIfAbsent(u.name(), n -> new EnumMap<>(ScramMechanism.class)).put(mechanism, credential);
                results.add(new Result(u.name(), Errors.NONE, null));
                changed = true;
            }
            catch (final IllegalArgumentException ex) // Kafka: ApiError.fromThrowable, no message for UNKNOWN_SERVER_ERROR
            {
                errors.put(u.name(), new Result(u.name(), Errors.UNKNOWN_SERVER_ERROR, null));
            }
            finally
            {
                Arrays.fill(u.saltedPassword(), (byte)0);
            }
        }
        results.addAll(errors.values());
        return new Outcome(results, changed ? after : current);
    }

    private static Result checkDeletion(final Map<String, Map<ScramMechanism, ScramCredential>> current, final Deletion d)
    {
        final Result refused = checkNameAndMechanism(d.name(), d.mechanism());
        if (refused != null)
        {
            return refused;
        }
        final Map<ScramMechanism, ScramCredential> byMechanism = current.get(d.name());
        if (byMechanism == null || !byMechanism.containsKey(ScramMechanism.forType(d.mechanism())))
        {
            return new Result(d.name(), Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist");
        }
        return null;
    }

    private static Result checkUpsertion(final Upsertion u)
    {
        final Result refused = checkNameAndMechanism(u.name(), u.mechanism());
        if (refused != null)
        {
            return refused;
        }
        if (u.iterations() < ScramMechanism.MIN_ITERATIONS)
        {
            return new Result(u.name(), Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
        }
        if (u.iterations() > ScramMechanism.MAX_ITERATIONS)
        {
            return new Result(u.name(), Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
        }
        return null;
    }

    private static Result checkNameAndMechanism(final String name, final byte mechanism)
    {
        if (name.isEmpty())
        {
            return new Result(name, Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        }
        if (ScramMechanism.forType(mechanism) == null)
        {
            return new Result(name, Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
        }
        return null;
    }

    /**
     * Kafka's describe: no users (null or empty) describes every user with a credential; a user named twice is
     * DUPLICATE_RESOURCE, one without a credential RESOURCE_NOT_FOUND; a user's credentials by mechanism type.
     */
    public static List<Described> describe(final Map<String, Map<ScramMechanism, ScramCredential>> current, final List<String> users)
    {
        final Map<String, Boolean> named = new HashMap<>(); // user -> named more than once (Kafka's map, Kafka's order)
        if (users == null || users.isEmpty())
        {
            current.keySet().forEach(u -> named.put(u, false));
        }
        else
        {
            users.forEach(u -> named.put(u, named.containsKey(u)));
        }
        final List<Described> described = new ArrayList<>();
        named.forEach((user, twice) ->
        {
            if (twice)
            {
                described.add(new Described(user, Errors.DUPLICATE_RESOURCE,
                    "Cannot describe SCRAM credentials for the same user twice in a single request: " + user, List.of()));
                return;
            }
            final Map<ScramMechanism, ScramCredential> byMechanism = current.get(user);
            if (byMechanism == null || byMechanism.isEmpty())
            {
                described.add(new Described(user, Errors.RESOURCE_NOT_FOUND,
                    "Attempt to describe a user credential that does not exist: " + user, List.of()));
                return;
            }
            final List<int[]> infos = new ArrayList<>();
            byMechanism.forEach((m, c) -> infos.add(new int[] {m.type(), c.iterations()}));
            described.add(new Described(user, Errors.NONE, null, infos));
        });
        return described;
    }

    private static Map<String, Map<ScramMechanism, ScramCredential>> copy(final Map<String, Map<ScramMechanism, ScramCredential>> current)
    {
        final Map<String, Map<ScramMechanism, ScramCredential>> copy = new HashMap<>();
        current.forEach((user, byMechanism) -> copy.put(user, new EnumMap<>(byMechanism)));
        return copy;
    }
}
