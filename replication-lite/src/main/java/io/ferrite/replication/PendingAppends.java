package io.ferrite.replication;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Supplier;

import org.apache.kafka.common.errors.NotLeaderOrFollowerException;

/**
 * The leader's appends waiting for their commit, by the offset of their last record and the epoch they
 * were appended in. An offset alone does not say a record committed: after a leader change the old
 * leader's uncommitted tail is truncated and the new leader's records take the same offsets. So an append
 * completes only when the committed batch that holds its last offset carries its epoch (a batch keeps the
 * epoch it was appended in, also when a later leader commits it); any other batch there fails it.
 * Added to by appenders, completed and failed by KRaft's I/O thread.
 */
final class PendingAppends
{
    private record Waiting(int epoch, CompletableFuture<Long> future)
    {
    }

    private final ConcurrentNavigableMap<Long, Waiting> byLastOffset = new ConcurrentSkipListMap<>();

    /** The future of an append whose last record is at {@code lastOffset}, appended in {@code epoch}. */
    CompletableFuture<Long> add(final long lastOffset, final int epoch)
    {
        final CompletableFuture<Long> future = new CompletableFuture<>();
        byLastOffset.put(lastOffset, new Waiting(epoch, future));
        return future;
    }

    /**
     * A batch the quorum committed, {@code baseOffset..lastOffset} appended in {@code epoch}: the appends
     * that end in it in its epoch complete; any other ending at or before its last offset was replaced.
     */
    void committed(final long baseOffset, final long lastOffset, final int epoch)
    {
        final var done = byLastOffset.headMap(lastOffset, true);
        done.forEach((last, waiting) ->
        {
            if (waiting.epoch() == epoch && last >= baseOffset)
            {
                waiting.future().complete(last);
            }
            else
            {
                waiting.future().completeExceptionally(new NotLeaderOrFollowerException("the append ending at offset " +
                    last + " in epoch " + waiting.epoch() + " was replaced: offsets " + baseOffset + ".." + lastOffset +
                    " were committed from epoch " + epoch));
            }
        });
        done.clear();
    }

    /** Fails the append ending at {@code lastOffset} if it still waits. */
    void fail(final long lastOffset, final Throwable why)
    {
        final Waiting waiting = byLastOffset.remove(lastOffset);
        if (waiting != null)
        {
            waiting.future().completeExceptionally(why);
        }
    }

    /** Fails every append waiting. */
    void failAll(final Supplier<? extends Throwable> why)
    {
        byLastOffset.values().forEach(waiting -> waiting.future().completeExceptionally(why.get()));
        byLastOffset.clear();
    }
}
