package io.ferrite.broker.metrics;

import io.ferrite.wire.message.ApiKeys;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.Arrays;

/**
 * One network thread's counters: requests per API (Fetch as {@link RequestKinds}' two), errors per API, per code and per
 * kind of request and code, the request times ({@link RequestTimes}, in the heap), records and bytes in and bytes out
 * (over the broker and, through {@link TopicCounters}, per topic), bytes out to followers, connections, duty cycles. Written by that network thread
 * only, with ordered stores ({@code incrementOrdered}, {@code getAndAddOrdered}: a plain read and a release store, no
 * atomic instruction, no lock), nothing allocated; read from anywhere, another process included, through the counters
 * file. Allocated at the broker's start and never freed while it runs.
 *
 * <p>With {@code ferrite.metrics.recording=false} ({@link #recording} false) every per-request figure here — requests,
 * errors, records and bytes, the request times (not stamped: {@code net.RequestDispatcher} asks {@link #recording}) —
 * and the duty cycles are left at 0: each of those methods starts with a read of that final field and returns. The
 * connection counts still count (once per connection, not per request).
 */
public final class NetworkCounters
{
    /** Counters a network thread allocates at the start (what the constructor below allocates). */
    static final int COUNT = ApiKeys.values().length + 1 + 3 + (1 + CounterTypes.ERROR_KINDS.length) *
        (CounterTypes.COUNTED_CODES.length + 1) + 8;

    private final int thread;
    private final boolean recording;
    private final AtomicCounter[] requests;
    private final AtomicCounter[] apiErrors;
    /** By error code (0 to 127); the codes not counted one by one share {@link #otherErrors}. */
    private final AtomicCounter[] codeErrors = new AtomicCounter[128];
    private final AtomicCounter otherErrors;
    /** By kind of request ({@link CounterTypes#ERROR_KINDS}' order) and code (its index in COUNTED_CODES; last: others). */
    private final AtomicCounter[][] requestErrors = new AtomicCounter[CounterTypes.ERROR_KINDS.length][];
    /** A kind's index in {@link #requestErrors}, -1 for kinds not counted; a code's index, -1 for the others. */
    private final int[] kindIndex = new int[RequestKinds.COUNT];
    private final int[] codeIndex = new int[128];
    private final AtomicCounter recordsIn;
    private final AtomicCounter bytesIn;
    private final AtomicCounter bytesOut;
    private final AtomicCounter replicationBytesOut;
    private final AtomicCounter accepted;
    private final AtomicCounter closed;
    private final AtomicCounter open;
    private final AtomicCounter dutyCycles;
    private final RequestTimes times;

    NetworkCounters(final BrokerCounters counters, final int thread, final boolean recording)
    {
        this.thread = thread;
        this.recording = recording;
        final String net = " net=" + thread;
        requests = new AtomicCounter[RequestKinds.COUNT];
        apiErrors = new AtomicCounter[RequestKinds.COUNT];
        for (final ApiKeys api : ApiKeys.values())
        {
            requests[api.id] = counters.allocate(CounterTypes.REQUESTS, thread, api.id, api.title + " requests" + net);
        }
        // Fetch's counter above counts consumers' fetches (Kafka's FetchConsumer), this one followers'
        requests[RequestKinds.FETCH_FOLLOWER] = counters.allocate(CounterTypes.REQUESTS, thread, RequestKinds.FETCH_FOLLOWER,
            "FetchFollower requests" + net);
        times = new RequestTimes();
        for (final ApiKeys api : new ApiKeys[] {ApiKeys.PRODUCE, ApiKeys.FETCH, ApiKeys.METADATA})
        {
            apiErrors[api.id] = counters.allocate(CounterTypes.API_ERRORS, thread, api.id, api.title + " errors" + net);
        }
        for (int i = 0; i < CounterTypes.COUNTED_CODES.length; i++)
        {
            final short code = CounterTypes.COUNTED_CODES[i];
            codeErrors[code] = counters.allocate(CounterTypes.ERROR_CODES, thread, code,
                "error " + CounterTypes.COUNTED_NAMES[i] + " (" + code + ")" + net);
        }
        otherErrors = counters.allocate(CounterTypes.ERROR_CODES, thread, CounterTypes.OTHER_CODE, "error other codes" + net);
        Arrays.fill(kindIndex, -1);
        Arrays.fill(codeIndex, -1);
        for (int i = 0; i < CounterTypes.COUNTED_CODES.length; i++)
        {
            codeIndex[CounterTypes.COUNTED_CODES[i]] = i;
        }
        for (int k = 0; k < CounterTypes.ERROR_KINDS.length; k++)
        {
            final int kind = CounterTypes.ERROR_KINDS[k];
            kindIndex[kind == RequestKinds.FETCH_ALL ? ApiKeys.FETCH.id : kind] = k; // by API: a fetch's are Fetch's
            requestErrors[k] = new AtomicCounter[CounterTypes.COUNTED_CODES.length + 1];
            for (int i = 0; i <= CounterTypes.COUNTED_CODES.length; i++)
            {
                final int code = i < CounterTypes.COUNTED_CODES.length ? CounterTypes.COUNTED_CODES[i] : CounterTypes.OTHER_CODE;
                requestErrors[k][i] = counters.allocate(CounterTypes.REQUEST_ERRORS, thread, CounterTypes.requestError(kind, code),
                    RequestKinds.name(kind) + (code == CounterTypes.OTHER_CODE ? " error other codes" :
                        " error " + CounterReadings.errorName(code) + " (" + code + ")") + net);
            }
        }
        recordsIn = counters.allocate(CounterTypes.RECORDS_IN, thread, 0, "records in" + net);
        bytesIn = counters.allocate(CounterTypes.BYTES_IN, thread, 0, "bytes in" + net);
        bytesOut = counters.allocate(CounterTypes.BYTES_OUT, thread, 0, "bytes out" + net);
        replicationBytesOut = counters.allocate(CounterTypes.REPLICATION_BYTES_OUT, thread, 0, "replication bytes out" + net);
        accepted = counters.allocate(CounterTypes.CONNECTIONS_ACCEPTED, thread, 0, "connections accepted" + net);
        closed = counters.allocate(CounterTypes.CONNECTIONS_CLOSED, thread, 0, "connections closed" + net);
        open = counters.allocate(CounterTypes.CONNECTIONS_OPEN, thread, 0, "connections open" + net);
        dutyCycles = counters.allocate(CounterTypes.DUTY_CYCLES, thread, 0, "network duty cycles" + net);
    }

    /**
     * Counters of their own, in this process's memory, for a network thread made without a broker (tests): a set of
     * one thread, index 0, whatever the thread's id (its topics, made without a broker either, have no counters).
     */
    public static NetworkCounters detached()
    {
        return BrokerCounters.inMemory(1).network(0);
    }

    /** The network thread's index: which of a {@link TopicCounters}' sets is this thread's. */
    public int thread()
    {
        return thread;
    }

    /**
     * Whether this thread records its requests ({@code ferrite.metrics.recording}, fixed at the start): when false, the
     * per-request methods below and {@link #dutyCycle} do nothing, and the network thread takes no request times.
     */
    public boolean recording()
    {
        return recording;
    }

    /** A request of {@code api} (read, about to be handled): any but a Fetch, counted by {@link #request(int)}. */
    public void request(final ApiKeys api)
    {
        if (recording)
        {
            requests[api.id].incrementOrdered();
        }
    }

    /** A request of {@code kind} ({@link RequestKinds}: a Fetch, once its handler read whose it is). */
    public void request(final int kind)
    {
        if (recording)
        {
            requests[kind].incrementOrdered();
        }
    }

    /** This thread's request times (its network thread records them, {@link RequestLatencies} reads them). */
    public RequestTimes times()
    {
        return times;
    }

    /** A partition (or topic) of a request of {@code api} answered {@code code}; NONE is not counted. */
    public void error(final ApiKeys api, final short code)
    {
        error(api.id, code);
    }

    /**
     * A partition (or topic) of a request of {@code kind} ({@link RequestKinds}; any of the fetch kinds is Fetch)
     * answered {@code code}; NONE is not counted. Counted per API, per code, and per API and code (Kafka's ErrorsPerSec,
     * whose {@code request=} is the API: {@code Fetch} for every fetch, never FetchConsumer or FetchFollower).
     */
    public void error(final int kind, final short code)
    {
        if (code == 0 || !recording)
        {
            return;
        }
        final int api = kind == RequestKinds.FETCH_FOLLOWER || kind == RequestKinds.FETCH_ALL ? ApiKeys.FETCH.id : kind;
        final AtomicCounter perApi = apiErrors[api];
        if (perApi != null)
        {
            perApi.incrementOrdered();
        }
        final AtomicCounter perCode = code > 0 && code < codeErrors.length ? codeErrors[code] : null;
        (perCode != null ? perCode : otherErrors).incrementOrdered();
        final int k = kindIndex[api];
        if (k >= 0)
        {
            final int c = code > 0 && code < codeIndex.length ? codeIndex[code] : -1;
            requestErrors[k][c >= 0 ? c : CounterTypes.COUNTED_CODES.length].incrementOrdered();
        }
    }

    /** A produced batch of {@code records} records, {@code bytes} long, appended to a partition of {@code topic}. */
    public void produced(final TopicCounters topic, final long records, final int bytes)
    {
        if (!recording)
        {
            return;
        }
        recordsIn.getAndAddOrdered(records);
        bytesIn.getAndAddOrdered(bytes);
        topic.produced(thread, records, bytes);
    }

    /**
     * A consumer's fetch response sends {@code length} bytes of batches of {@code topic}. Only the length is counted, as
     * Kafka's {@code BytesOutPerSec} does (Kafka has no records-out figure): the batches are not read (they are sent
     * from the file, and a count of their records would walk every batch header on this thread).
     */
    public void fetched(final TopicCounters topic, final int length)
    {
        if (!recording)
        {
            return;
        }
        bytesOut.getAndAddOrdered(length);
        topic.fetched(thread, length);
    }

    /** A follower's fetch response sends {@code length} bytes of batches (Kafka's {@code ReplicationBytesOutPerSec}: not per topic). */
    public void replicated(final int length)
    {
        if (recording)
        {
            replicationBytesOut.getAndAddOrdered(length);
        }
    }

    /** A connection taken over from the acceptor; {@code openNow} on this thread after it. */
    public void accepted(final int openNow)
    {
        accepted.incrementOrdered();
        open.setOrdered(openNow);
    }

    /** A connection closed; {@code openNow} on this thread after it. */
    public void closed(final int openNow)
    {
        closed.incrementOrdered();
        open.setOrdered(openNow);
    }

    /** One pass of the thread's duty cycle. */
    public void dutyCycle()
    {
        if (recording)
        {
            dutyCycles.incrementOrdered();
        }
    }
}
