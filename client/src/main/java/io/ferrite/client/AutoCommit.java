package io.ferrite.client;

import java.util.ArrayList;

/**
 * {@code enable.auto.commit}: every {@code auto.commit.interval.ms} the consumed positions are committed without waiting
 * (kafka-clients' {@code maybeAutoCommitOffsetsAsync} from {@code poll}; here from the duty cycle). A retriable failure
 * tries again after {@code retry.backoff.ms}, another is dropped, as kafka-clients logs it and goes on. The interval
 * commit skips a turn while another commit is outstanding (one at a time). The commits before a revocation and on
 * close are {@link GroupMembership}'s and {@link Consumer#close}'s ({@link CommitCalls.Mode#REVOKE}). Single-threaded;
 * allocates nothing.
 */
final class AutoCommit
{
    private final ConsumerConfig config;
    private final CommitCalls calls;
    private final long retryBackoffNs;
    private long nextNs;
    private long nowNs;
    private final OffsetCommitHandler done = this::onComplete;

    AutoCommit(final ConsumerConfig config, final CommitCalls calls, final long nowNs)
    {
        this.config = config;
        this.calls = calls;
        this.retryBackoffNs = config.retryBackoffNs;
        this.nextNs = nowNs + config.autoCommitIntervalNs;
    }

    private void onComplete(final long tag, final short error)
    {
        if (error != ClientErrors.NONE && (ClientErrors.retriable(error) || error == ClientErrors.NETWORK_EXCEPTION))
        {
            nextNs = nowNs + retryBackoffNs;
        }
    }

    int doWork(final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        this.nowNs = nowNs;
        if (nowNs - nextNs < 0)
        {
            return 0;
        }
        nextNs = nowNs + config.autoCommitIntervalNs;
        return calls.start(assigned, done, 0, CommitCalls.Mode.POSITIONS) ? 1 : 0;
    }
}
