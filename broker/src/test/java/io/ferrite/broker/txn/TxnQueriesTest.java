package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** DescribeTransactions and ListTransactions (research §1.3). */
class TxnQueriesTest
{
    private static final TxnPartition TP = new TxnPartition("orders", 0);
    private final TxnHarness h = new TxnHarness();

    private static Set<String> ids(final TxnQueries.Listing listing)
    {
        return Set.copyOf(listing.transactions().stream().map(TxnQueries.Listed::transactionalId).toList());
    }

    @Test
    void describe()
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 0));
        final TxnQueries.Described d = TxnQueries.describe(h.cache, "t");
        assertEquals(Errors.NONE, d.error());
        assertEquals(h.get("t").snapshot(), d.state());
        assertEquals("Ongoing", d.state().state().stateName());
        assertEquals(Errors.TRANSACTIONAL_ID_NOT_FOUND, TxnQueries.describe(h.cache, "nope").error());
        assertEquals(Errors.INVALID_REQUEST, TxnQueries.describe(h.cache, "").error());
        final TxnCache unloaded = new TxnCache(TxnConfig.defaults());
        assertEquals(Errors.NOT_COORDINATOR, TxnQueries.describe(unloaded, "t").error());
        unloaded.loading(TxnConfig.defaults().partitionFor("t"));
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnQueries.describe(unloaded, "t").error());
    }

    @Test
    void deadIsNeitherDescribedNorListed()
    {
        final TxnMetadata m = h.put("t", state(7, 3, TxnState.EMPTY, Set.of(), 0));
        m.prepareDead();
        // Dead only ever pending: a cache holding it in state Dead is what Kafka guards against
        h.put("d", new TxnTransit(8, -1, -1, (short)1, (short)-1, 1000, TxnState.DEAD, Set.of(), -1, 0, (short)0));
        assertEquals(Errors.TRANSACTIONAL_ID_NOT_FOUND, TxnQueries.describe(h.cache, "d").error());
        assertEquals(Set.of("t"), ids(TxnQueries.list(h.cache, Set.of(), List.of(), -1, null, 0)));
        assertEquals(Set.of(), ids(TxnQueries.list(h.cache, Set.of(), List.of("Dead"), -1, null, 0)));
    }

    @Test
    void listFilters()
    {
        h.put("orders-1", state(7, 3, TxnState.ONGOING, Set.of(TP), 0));
        h.put("orders-2", state(8, 3, TxnState.COMPLETE_COMMIT, Set.of(), 0));
        h.put("payments", state(9, 3, TxnState.EMPTY, Set.of(), 0));
        assertEquals(Set.of("orders-1", "orders-2", "payments"), ids(TxnQueries.list(h.cache, Set.of(), List.of(), -1, null, 0)));
        assertEquals(Set.of("orders-2"), ids(TxnQueries.list(h.cache, Set.of(8L, 99L), List.of(), -1, null, 0)));
        final TxnQueries.Listing byState = TxnQueries.list(h.cache, Set.of(), List.of("Ongoing", "Bogus", "ongoing", "Bogus", "Ongoing"), -1,
            null, 0);
        assertEquals(Set.of("orders-1"), ids(byState));
        assertEquals(List.of("Bogus", "ongoing"), byState.unknownStateFilters(), "each unknown name once, in the order first given");
        assertEquals(Set.of(), ids(TxnQueries.list(h.cache, Set.of(), List.of("Bogus"), -1, null, 0)), "unknown names match nothing");
        // started at 5 000 (Empty's start is -1): running longer than the filter is now - start > filter
        assertEquals(Set.of("payments"), ids(TxnQueries.list(h.cache, Set.of(), List.of(), 10_000, null, 15_000)));
        assertEquals(Set.of("orders-1", "orders-2", "payments"), ids(TxnQueries.list(h.cache, Set.of(), List.of(), 9_999, null, 15_000)));
        assertEquals(Set.of("orders-1", "orders-2"), ids(TxnQueries.list(h.cache, Set.of(), List.of(), -1, "orders-.*", 0)));
        assertEquals(Set.of(), ids(TxnQueries.list(h.cache, Set.of(), List.of(), -1, "orders", 0)), "the whole id must match");
        assertEquals(Set.of("orders-1"), ids(TxnQueries.list(h.cache, Set.of(7L, 8L), List.of("Ongoing", "Empty"), -1, "orders.*", 0)));
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION, TxnQueries.list(h.cache, Set.of(), List.of(), -1, "orders-(", 0).error());
        assertEquals(new TxnQueries.Listed("orders-1", 7, "Ongoing"),
            TxnQueries.list(h.cache, Set.of(7L), List.of(), -1, "", 0).transactions().get(0));
    }

    @Test
    void listWhileAPartitionLoads()
    {
        final TxnCache cache = new TxnCache(TxnConfig.defaults());
        cache.loading(3);
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnQueries.list(cache, Set.of(), List.of(), -1, null, 0).error());
        cache.loaded(3, Map.of());
        assertEquals(Errors.NONE, TxnQueries.list(cache, Set.of(), List.of(), -1, null, 0).error());
    }

    /**
     * The id pattern is RE2/J's, as in Kafka 4.4 (its TransactionStateManager compiles it with
     * com.google.re2j): where java.util.regex answers otherwise, the answer is RE2/J's.
     */
    @Test
    void theIdPatternIsRe2j()
    {
        for (final String id : List.of("t\r1", "a", "&", "b", "É", "\u000B", " "))
        {
            h.put(id, state(7, 3, TxnState.EMPTY, Set.of(), 0));
        }
        // RE2/J's . is anything but \n (java.util.regex's leaves out \r too)
        assertEquals(Set.of("t\r1"), listed("t.*"));
        // no class intersection in RE2/J: [a&&b] is the characters a, & and b (java.util.regex: nothing)
        assertEquals(Set.of("a", "&", "b"), listed("[a&&b]"));
        // Python's named group is RE2/J's (java.util.regex refuses it)
        assertEquals(Set.of("a"), listed("(?P<x>a)"));
        // (?i) folds every letter in RE2/J (java.util.regex: ASCII only, without UNICODE_CASE)
        assertEquals(Set.of("É"), listed("(?i)é"));
        // RE2/J's \s is [\t\n\f\r ], without the vertical tab that java.util.regex's has
        assertEquals(Set.of(" "), listed("\\s"));
        // what java.util.regex alone accepts: look-around, back-references
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION, TxnQueries.list(h.cache, Set.of(), List.of(), -1, "(?=a)a", 0).error());
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION, TxnQueries.list(h.cache, Set.of(), List.of(), -1, "(a)\\1", 0).error());
    }

    private Set<String> listed(final String pattern)
    {
        final TxnQueries.Listing listing = TxnQueries.list(h.cache, Set.of(), List.of(), -1, pattern, 0);
        assertEquals(Errors.NONE, listing.error(), pattern);
        return ids(listing);
    }
}
