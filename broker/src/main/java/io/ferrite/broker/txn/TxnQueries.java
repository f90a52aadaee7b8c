package io.ferrite.broker.txn;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.ferrite.broker.Errors;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** DescribeTransactions and ListTransactions, as Kafka 4.4's coordinator answers them. */
public final class TxnQueries
{
    private TxnQueries()
    {
    }

    /** One described transaction: an error (then the rest is empty), or its state. */
    public record Described(short error, String transactionalId, TxnTransit state)
    {
    }

    /** One listed transaction. */
    public record Listed(String transactionalId, long producerId, String stateName)
    {
    }

    /** ListTransactions' answer: an error, the state names it did not know, and the transactions. */
    public record Listing(short error, List<String> unknownStateFilters, List<Listed> transactions)
    {
    }

    public static Described describe(final TxnCache cache, final String transactionalId)
    {
        if (transactionalId.isEmpty())
        {
            return new Described(Errors.INVALID_REQUEST, transactionalId, null);
        }
        final short lookup = cache.lookupError(transactionalId);
        if (lookup != Errors.NONE)
        {
            return new Described(lookup, transactionalId, null);
        }
        final TxnMetadata m = cache.get(transactionalId);
        if (m == null || m.state() == TxnState.DEAD)
        {
            return new Described(Errors.TRANSACTIONAL_ID_NOT_FOUND, transactionalId, null);
        }
        return new Described(Errors.NONE, transactionalId, m.snapshot());
    }

    /**
     * The transactions every filter keeps (an empty set or a negative duration filters nothing):
     * producer id in {@code producerIds}; state named in {@code stateNames} (names no state has are
     * echoed back, each once, in the order first given, and match nothing: Kafka takes the names as a set); running longer than {@code durationMs} ({@code now - start >
     * duration}); id matching {@code idPattern} whole. Dead ids never.
     *
     * <p>The pattern is RE2/J's ({@code com.google.re2j}, as Kafka 4.4 compiles it), not
     * {@code java.util.regex}'s: the two differ on patterns both accept (RE2/J's {@code .} matches
     * {@code \r}, {@code [a&&b]} is three characters, {@code (?i)} folds non-ASCII letters,
     * {@code \s} leaves out the vertical tab) and on what each accepts ({@code (?P<x>a)} is RE2/J's
     * only; look-around and back-references are {@code java.util.regex}'s only).
     */
    public static Listing list(final TxnCache cache, final Set<Long> producerIds, final List<String> stateNames,
        final long durationMs, final String idPattern, final long now)
    {
        if (cache.anyLoading())
        {
            return new Listing(Errors.COORDINATOR_LOAD_IN_PROGRESS, List.of(), List.of());
        }
        final Set<TxnState> states = EnumSet.noneOf(TxnState.class);
        final List<String> unknown = new ArrayList<>();
        for (final String name : new LinkedHashSet<>(stateNames))
        {
            final TxnState s = TxnState.ofName(name);
            if (s == null)
            {
                unknown.add(name);
            }
            else
            {
                states.add(s);
            }
        }
        final Pattern pattern;
        try
        {
            pattern = idPattern == null || idPattern.isEmpty() ? null : Pattern.compile(idPattern);
        }
        catch (final PatternSyntaxException ex)
        {
            return new Listing(Errors.INVALID_REGULAR_EXPRESSION, List.of(), List.of());
        }
        final List<Listed> listed = new ArrayList<>();
        for (final TxnMetadata m : cache.all())
        {
            if (m.state() == TxnState.DEAD
                || !producerIds.isEmpty() && !producerIds.contains(m.producerId())
                || !stateNames.isEmpty() && !states.contains(m.state())
                || durationMs >= 0 && now - m.startTimestamp() <= durationMs
                || pattern != null && !pattern.matcher(m.transactionalId()).matches())
            {
                continue;
            }
            listed.add(new Listed(m.transactionalId(), m.producerId(), m.state().stateName()));
        }
        return new Listing(Errors.NONE, unknown, listed);
    }
}
