package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.HeartbeatRequestEncoder;
import io.ferrite.wire.message.HeartbeatResponseDecoder;
import org.agrona.DirectBuffer;

/**
 * A member's Heartbeat (up to v4) every {@code heartbeat.interval.ms} from the duty cycle, one in flight at a time, as
 * kafka-clients' heartbeat thread sends them (here on the consumer's thread). The answer's error goes to
 * {@link GroupMembership}, unless the heartbeat was of a generation left since ({@link #STALE}: kafka-clients ignores
 * those errors too). Single-threaded; allocates nothing.
 */
final class GroupHeartbeat
{
    /** The answer of a heartbeat sent under another generation. */
    static final short STALE = Short.MIN_VALUE;
    private static final short MAX_VERSION = 4;

    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final HeartbeatRequestEncoder request = new HeartbeatRequestEncoder();
    private final HeartbeatResponseDecoder response = new HeartbeatResponseDecoder();
    private long nextNs;
    private boolean inFlight;
    private int sentGeneration;
    /** Heartbeats sent (tests: the allocation test checks its measured phase had some). */
    long sent;

    GroupHeartbeat(final ConsumerConfig config, final GroupOffsets group)
    {
        this.config = config;
        this.group = group;
    }

    /** The member synced: the first heartbeat goes one interval from now. */
    void start(final long nowNs)
    {
        nextNs = nowNs + config.heartbeatIntervalNs;
    }

    /** Sends the heartbeat due on {@code c} (the coordinator's connection when ready, else null). */
    int doWork(final NodeConnection c, final int generation, final String memberId, final long nowNs)
    {
        if (c == null || inFlight || nowNs - nextNs < 0)
        {
            return 0;
        }
        final short version = c.version(ApiKeys.HEARTBEAT, MAX_VERSION);
        final int body = c.begin(ApiKeys.HEARTBEAT, version);
        request.wrap(c.buffer(), body, version).groupId(group.groupIdBytes, 0, group.groupIdBytes.capacity())
            .generationId(generation).memberId(memberId).groupInstanceId(config.groupInstanceId);
        c.commit(ApiKeys.HEARTBEAT, version, body + request.finish(), this, true, nowNs);
        inFlight = true;
        sent++;
        sentGeneration = generation;
        nextNs = nowNs + config.heartbeatIntervalNs;
        return 1;
    }

    /** The answer's error code, or {@link #STALE} if it was sent under another generation than {@code generation}. */
    short onResponse(final short version, final DirectBuffer buffer, final int offset, final int limit, final int generation)
    {
        inFlight = false;
        response.wrap(buffer, offset, limit, version);
        return sentGeneration == generation ? response.errorCode() : STALE;
    }

    /** It got no answer (the coordinator's connection closed or timed out): the next goes on the interval. */
    void failed()
    {
        inFlight = false;
    }
}
