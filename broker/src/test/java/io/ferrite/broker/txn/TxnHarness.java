package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The coordinator's rules driven as its agent will drive them, without threads: every
 * {@link TxnWrite} goes to an in-memory {@code __transaction_state} log (its key and value bytes,
 * every partition in one list) or fails, and markers are "written" at once. What the tests read:
 * the cache, the log, the last answer, the marker jobs.
 */
final class TxnHarness
{
    final TxnConfig config;
    TxnCache cache;
    final List<byte[][]> log = new ArrayList<>();
    final List<MarkerJob> markers = new ArrayList<>();
    long now = 10_000;
    long nextProducerId = 1000;
    boolean idsFail;
    /** The ids' next block not reserved yet: {@link ProducerIdSource#NONE_YET}. */
    boolean idsNotYet;

    final ProducerIdSource ids = () ->
    {
        if (idsFail)
        {
            throw new IOException("disk full");
        }
        return idsNotYet ? ProducerIdSource.NONE_YET : nextProducerId++;
    };

    TxnHarness()
    {
        this(TxnConfig.defaults());
    }

    TxnHarness(final TxnConfig config)
    {
        this.config = config;
        this.cache = new TxnCache(config);
        for (int p = 0; p < config.stateLogPartitions(); p++)
        {
            cache.loaded(p, Map.of());
        }
    }

    TxnMetadata get(final String id)
    {
        return cache.get(id);
    }

    /** Puts a transaction in the given state, as loaded from the log. */
    TxnMetadata put(final String id, final TxnTransit t)
    {
        final TxnMetadata m = new TxnMetadata(id, t);
        cache.put(m);
        return m;
    }

    static TxnTransit state(final long pid, final int epoch, final TxnState state, final Set<TxnPartition> partitions, final int tv)
    {
        return new TxnTransit(pid, -1, -1, (short)epoch, (short)-1, 60_000, state, partitions,
            state == TxnState.EMPTY ? -1 : 5_000, 5_000, (short)tv);
    }

    /** A decision carried through: a write is written (and its markers and Complete* too, when {@code finish}). */
    Answer run(final TxnDecision d, final boolean finish)
    {
        if (d instanceof Answer a)
        {
            return a;
        }
        final TxnOutcome outcome = written((TxnWrite)d);
        if (outcome.markers() != null)
        {
            markers.add(outcome.markers());
            if (finish)
            {
                written(outcome.markers().complete());
            }
        }
        return outcome.answer();
    }

    Answer run(final TxnDecision d)
    {
        return run(d, true);
    }

    TxnOutcome written(final TxnWrite w)
    {
        log.add(new byte[][] {w.key(), w.value(config.valueVersion())});
        return TxnWrites.written(cache, w, now);
    }

    TxnOutcome failed(final TxnWrite w, final short error)
    {
        return TxnWrites.failed(cache, w, error);
    }

    TxnDecision init(final String id, final long pid, final int epoch)
    {
        return InitProducerIdRules.initProducerId(cache, ids, id, 60_000, pid, (short)epoch, now);
    }

    TxnDecision add(final String id, final long pid, final int epoch, final short version, final TxnPartition... partitions)
    {
        return AddPartitionsRules.add(cache, id, pid, (short)epoch, Set.of(partitions), TxnErrors.addPartitionsClientVersion(version), now);
    }

    TxnDecision end(final String id, final long pid, final int epoch, final boolean commit, final int version)
    {
        return EndTxnRules.endTxn(cache, ids, id, pid, (short)epoch, commit, (short)version, now);
    }

    /** Replays the log as a load would, into a fresh cache's view. */
    TxnReplay.Loaded replay()
    {
        final TxnReplay replay = new TxnReplay();
        for (final byte[][] record : log)
        {
            final org.agrona.concurrent.UnsafeBuffer key = new org.agrona.concurrent.UnsafeBuffer(record[0]);
            if (record[1] == null)
            {
                replay.apply(key, 0, record[0].length, 0, -1);
            }
            else
            {
                final byte[] both = new byte[record[0].length + record[1].length];
                System.arraycopy(record[0], 0, both, 0, record[0].length);
                System.arraycopy(record[1], 0, both, record[0].length, record[1].length);
                replay.apply(new org.agrona.concurrent.UnsafeBuffer(both), 0, record[0].length, record[0].length, record[1].length);
            }
        }
        return replay.finish(now);
    }

    /**
     * A coordinator restart: what was written is replayed into a new cache, partition by partition
     * (what was in memory only, pending transitions included, is gone). Returns the load's jobs: the
     * transactions left prepared, whose markers and Complete* are to be written again.
     */
    java.util.List<MarkerJob> restart()
    {
        final TxnReplay.Loaded loaded = replay();
        cache = new TxnCache(config);
        for (int p = 0; p < config.stateLogPartitions(); p++)
        {
            final Map<String, TxnMetadata> own = new java.util.HashMap<>();
            for (final TxnMetadata m : loaded.transactions().values())
            {
                if (config.partitionFor(m.transactionalId()) == p)
                {
                    own.put(m.transactionalId(), m);
                }
            }
            cache.loading(p);
            cache.loaded(p, own);
        }
        return loaded.toComplete();
    }

    static short error(final TxnDecision d)
    {
        return d instanceof Answer a ? a.error() : Errors.NONE;
    }
}
