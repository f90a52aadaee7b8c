package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ProduceResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;

/**
 * A Kafka producer that allocates nothing in steady state. Single-threaded: {@link #send} and
 * {@link #doWork()} are called by one thread — the application's own (Aeron style: no client
 * thread), or an {@code AgentRunner} running this agent composed with the application's agent
 * ({@code CompositeAgent}). {@code send} copies the record into its partition's open batch (built
 * in place off-heap); a batch is sealed when it is full, on {@link #flush()}, or once {@code linger.ms} has passed
 * when its partition may send it (a batch keeps taking records while the one before it is in flight, as
 * kafka-clients' accumulator); the duty cycle sends them to their leaders, and calls the
 * {@link CompletionHandler} per record with its offset or error. Retriable errors (kafka-clients' classification) are retried after
 * {@code retry.backoff.ms} within {@code retries} and {@code delivery.timeout.ms}. Idempotent by
 * default, as kafka-clients ({@link Idempotence}): a producer id, a sequence per batch, up to
 * {@code max.in.flight.requests.per.connection} (at most 5) batches of a partition in flight and retries
 * in sequence order, so a retry after a lost answer writes nothing twice. Without idempotence one batch
 * per partition is in flight, so a retry keeps the partition's order.
 */
public final class Producer implements Agent, ResponseListener, AutoCloseable
{
    /** {@link #send}: the topic's partitions are not known yet (asked for); call again after {@link #doWork()}. */
    public static final int METADATA_PENDING = -1;
    /**
     * {@link #send}: the broker does not know the topic (its metadata answered UNKNOWN_TOPIC_OR_PARTITION or another
     * error that is not retriable, TOPIC_AUTHORIZATION_FAILED say).
     */
    public static final int UNKNOWN_TOPIC = -2;
    /** {@link #send}: the record cannot fit a request of {@code max.request.size} (or {@code buffer.memory}), counted as kafka-clients counts. */
    public static final int RECORD_TOO_LARGE = -3;
    /** {@link #send}: the producer is closed. */
    public static final int CLOSED = -4;
    /** {@link #send}: the partition asked for is not one of the topic's. */
    public static final int INVALID_PARTITION = -5;
    /** {@link #send}: every batch {@code buffer.memory} allows is in use; run the duty cycle and send again. */
    public static final int BUFFER_FULL = -6;
    /** {@link #send}: the idempotent producer met a fatal error ({@link #fatalError()}); close it. */
    public static final int FATAL_ERROR = -7;
    /** {@link #send}: the topic's name is not a legal one (its metadata answered INVALID_TOPIC_EXCEPTION). */
    public static final int INVALID_TOPIC = -8;

    private final ProducerConfig config;
    private final CompletionHandler handler;
    private final ClusterMetadata metadata;
    private final ProducerPools pools;
    private final Idempotence idempotence;
    private final BatchDrain drain;
    private final ProduceResponseDecoder response = new ProduceResponseDecoder();
    private final ProducerTrace trace;
    private boolean flushRequested;
    private boolean closed;
    private long pending;
    private long nowNs;

    /** @throws ConfigException for settings kafka-clients refuses (idempotence with acks, retries or in-flight bounds) */
    public Producer(final ProducerConfig config, final CompletionHandler handler)
    {
        this.idempotence = new Idempotence(config.idempotent(), config.retryBackoffNs);
        this.config = config;
        this.handler = handler;
        this.metadata = new ClusterMetadata(config.transport(), this);
        this.pools = new ProducerPools(config);
        this.drain = new BatchDrain(config, metadata, pools, idempotence);
        this.trace = config.trace;
    }

    /**
     * Adds a record to its partition's batch.
     *
     * @param partition the partition, or -1 to place it by key (murmur2, as kafka-clients) or, without a key, on the
     *                  topic's current batch
     * @param keyLength -1 for a null key; {@code valueLength} -1 for a null value
     * @param headers   the record's headers, or null
     * @param timestamp the record's timestamp, or -1 for now
     * @param tag       handed back to the {@link CompletionHandler} with the record's outcome
     * @return the partition (0 and up), or {@link #METADATA_PENDING}, {@link #UNKNOWN_TOPIC},
     * {@link #INVALID_TOPIC}, {@link #RECORD_TOO_LARGE}, {@link #CLOSED}, {@link #INVALID_PARTITION}, {@link #BUFFER_FULL},
     * {@link #FATAL_ERROR}
     * @throws IllegalArgumentException for a length below -1 or a range outside its buffer (key, value or a header),
     *                                  before anything is taken
     */
    public int send(
        final String topic, final int partition,
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength,
        final OutgoingHeaders headers, final long timestamp, final long tag)
    {
        if (closed)
        {
            return CLOSED;
        }
        if (idempotence.fatalError() != 0)
        {
            return FATAL_ERROR;
        }
        RecordChecks.check(key, keyOffset, keyLength, value, valueOffset, valueLength, headers);
        final TopicState t = metadata.topic(topic);
        if (t.status != TopicState.Status.KNOWN)
        {
            return t.status == TopicState.Status.PENDING ? METADATA_PENDING : failed(t);
        }
        final int n = t.partitions.length;
        final int p = partition >= 0 ? partition :
            keyLength >= 0 ? Murmur2Partitioner.partition(key, keyOffset, keyLength, n) : t.sticky % n;
        if (p >= n)
        {
            return INVALID_PARTITION;
        }
        final int estimate = ProducerBatch.RECORD_OVERHEAD + Math.max(keyLength, 0) + Math.max(valueLength, 0) +
            (headers == null ? 0 : headers.maxEncodedLength());
        final int upperBound = RecordChecks.sizeUpperBound(keyLength, valueLength, headers);
        if (upperBound > config.maxRequestSize || upperBound > config.bufferMemory)
        {
            return RECORD_TOO_LARGE;
        }
        final PartitionState ps = t.partitions[p];
        final long now = System.nanoTime();
        ProducerBatch b = ps.open;
        if (b != null && (b.estimatedSize + estimate > config.batchSize || now - b.deliveryDeadlineNs >= 0))
        {
            // full, it waits for its turn; past its delivery timeout (its partition busy since), it expires at the next
            // duty cycle, as kafka-clients expires it and opens another: either way the record opens the next
            ps.sealQueued();
            b = null;
        }
        if (b == null)
        {
            b = pools.takeBatch();
            if (b == null)
            {
                return BUFFER_FULL;
            }
            b.open(t, ps, config.compression, now, config.deliveryTimeoutNs);
            ps.open = b;
        }
        b.append(timestamp < 0 ? System.currentTimeMillis() : timestamp, key, keyOffset, keyLength,
            value, valueOffset, valueLength, headers, estimate, tag);
        pending++;
        return p;
    }

    /** Seals every open batch at the next duty cycle, linger or not. */
    public void flush()
    {
        flushRequested = true;
    }

    /** 0, or the Kafka error that stopped the idempotent producer (PRODUCER_FENCED, CLUSTER_AUTHORIZATION_FAILED, ...). */
    public short fatalError()
    {
        return idempotence.fatalError();
    }

    /** Whether the producer is idempotent ({@code enable.idempotence} after kafka-clients' rules). */
    public boolean idempotent()
    {
        return idempotence.enabled();
    }

    /** A partition's state, for the tests (its batches in flight, its sequences). */
    PartitionState partitionState(final String topic, final int partition)
    {
        return metadata.topic(topic).partitions[partition];
    }

    /** The batch pool, for the tests (how many batches it made, its bound). */
    ProducerPools pools()
    {
        return pools;
    }

    /** The producer's state in words ({@link ProducerDiagnostics}), for a test that timed out. */
    String describeState()
    {
        return ProducerDiagnostics.describe(metadata, idempotence, System.nanoTime());
    }

    /** Records sent and not completed yet. */
    public long pending()
    {
        return pending;
    }

    /**
     * Runs the duty cycle until the topic's partitions are known or {@code timeoutMs} passed: for
     * the application's thread before its first sends (not for a producer on an {@code AgentRunner}).
     *
     * @return the partition count, or {@link #UNKNOWN_TOPIC}, {@link #INVALID_TOPIC}, {@link #METADATA_PENDING} (timed
     * out), {@link #CLOSED}
     */
    public int awaitPartitions(final String topic, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        final TopicState t = metadata.topic(topic);
        while (!closed && t.status == TopicState.Status.PENDING && System.nanoTime() - deadline < 0)
        {
            if (doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
        return closed ? CLOSED : t.status == TopicState.Status.KNOWN ? t.partitions.length :
            t.status == TopicState.Status.FAILED ? failed(t) : METADATA_PENDING;
    }

    private static int failed(final TopicState t)
    {
        return t.error == ClientErrors.INVALID_TOPIC_EXCEPTION ? INVALID_TOPIC : UNKNOWN_TOPIC;
    }

    @Override
    public int doWork()
    {
        final long now = System.nanoTime();
        nowNs = now;
        int work = metadata.pollAll(now);
        work += idempotence.poll(metadata.connections, metadata.topics, now);
        work += sealDue(now, idempotence.fatalError());
        for (int i = 0; i < metadata.connections.size() && idempotence.ready(); i++)
        {
            final NodeConnection c = metadata.connections.get(i);
            if (c.nodeId >= 0 && c.canSend() && c.inFlight() < config.maxInFlight && c.unsent() == 0 &&
                drain.sendTo(c, now) > 0)
            {
                work += 1 + c.flush(now); // written now, not at the next cycle's poll
            }
        }
        return work;
    }

    /**
     * Seals the batches that are full or flushed (all of them once closed or fatal) and those past their delivery
     * timeout, expires them, and fails all queued once {@code fatal}. A batch whose {@code linger.ms} has passed stays
     * open, taking records, until its partition may send it ({@link BatchDrain} seals it then): sealed at once, records
     * arriving faster than a round trip would queue as one small batch per duty cycle behind the batch in flight.
     * A batch never sent expires at its deadline, batches of its partition in flight or not (kafka-clients'
     * {@code RecordAccumulator.expiredBatches}); one sent before (a retry) once none of its partition is in flight.
     */
    private int sealDue(final long now, final short fatal)
    {
        int work = 0;
        for (int i = 0; i < metadata.topics.size(); i++)
        {
            final PartitionState[] partitions = metadata.topics.get(i).partitions;
            for (int p = 0; p < partitions.length; p++)
            {
                final PartitionState ps = partitions[p];
                final ProducerBatch open = ps.open;
                if (open != null && (flushRequested || closed || fatal != 0 || open.estimatedSize >= config.batchSize ||
                    (ps.sealed.peekFirst() == null && now - open.deliveryDeadlineNs >= 0)))
                {
                    ps.sealQueued();
                    work++;
                }
                for (ProducerBatch b = fatal != 0 ? ps.sealed.pollFirst() : null; b != null; b = ps.sealed.pollFirst())
                {
                    fail(b, fatal); // kafka-clients aborts every batch not yet acknowledged once the error is fatal
                    work++;
                }
                final ProducerBatch first = ps.sealed.peekFirst();
                if (first != null && now - first.deliveryDeadlineNs >= 0 && (ps.inFlight == 0 || first.attempts == 0))
                {
                    ps.sealed.pollFirst();
                    fail(first, ClientErrors.DELIVERY_TIMEOUT);
                    work++;
                }
                else if (ps.inFlight == 0 && (first != null || ps.lingeredOpen(now, config.lingerNs) != null) &&
                    (ps.leader < 0 || metadata.leaderConnection(ps.leader, now) == null))
                {
                    metadata.requestUpdate();
                }
            }
        }
        flushRequested = false;
        return work;
    }

    /** acks=0: a batch is done once its request is in the socket (kafka-clients completes it then too, offset -1). */
    @Override
    public void onWritten(final NodeConnection connection, final Object context)
    {
        final ProduceContext ctx = (ProduceContext)context;
        for (int i = 0; i < ctx.count; i++)
        {
            final ProducerBatch b = ctx.batches[i];
            b.partition.inFlight--;
            complete(b, -1, ClientErrors.NONE);
        }
        pools.releaseContext(ctx);
    }

    @Override
    public void onResponse(final NodeConnection connection, final short apiKey, final short version, final Object context,
        final DirectBuffer buffer, final int offset, final int limit)
    {
        if (apiKey == ApiKeys.METADATA.id)
        {
            metadata.onResponse(version, buffer, offset, limit, nowNs);
            return;
        }
        if (apiKey == ApiKeys.INIT_PRODUCER_ID.id)
        {
            idempotence.onResponse(version, buffer, offset, limit, nowNs);
            return;
        }
        final ProduceContext ctx = (ProduceContext)context;
        response.wrap(buffer, offset, limit, version);
        for (var t = response.responses(); t.hasNext(); )
        {
            t.next();
            for (var p = t.partitionResponses(); p.hasNext(); )
            {
                p.next();
                final ProducerBatch b = ctx.take(buffer, t.nameOffset(), t.nameLength(), p.index());
                if (b != null)
                {
                    result(b, p.errorCode(), p.baseOffset(), p.logStartOffset());
                }
            }
        }
        for (int i = 0; i < ctx.count; i++)
        {
            if (ctx.batches[i] != null)
            {
                result(ctx.batches[i], ClientErrors.NETWORK_EXCEPTION, -1, -1); // not answered: try again
            }
        }
        pools.releaseContext(ctx);
    }

    @Override
    public void onFailure(final NodeConnection connection, final short apiKey, final Object context, final short errorCode)
    {
        if (apiKey == ApiKeys.METADATA.id)
        {
            metadata.onFailure(nowNs);
            return;
        }
        if (apiKey == ApiKeys.INIT_PRODUCER_ID.id)
        {
            idempotence.onFailure(nowNs);
            return;
        }
        final ProduceContext ctx = (ProduceContext)context;
        for (int i = 0; i < ctx.count; i++)
        {
            result(ctx.batches[i], errorCode, -1, -1);
        }
        pools.releaseContext(ctx);
        metadata.requestUpdate();
    }

    @Override
    public void onFlushed(final NodeConnection connection)
    {
        if (trace != null)
        {
            trace.onWritten(connection.nodeId);
        }
    }

    @Override
    public void onReady(final NodeConnection connection)
    {
        pools.ensureContexts(metadata.connections.size());
    }

    /** A batch's answer: done, retried (in sequence order with idempotence), or failed. */
    private void result(final ProducerBatch b, final short error, final long baseOffset, final long logStartOffset)
    {
        final PartitionState ps = b.partition;
        ps.inFlight--;
        b.lastError = error;
        if (trace != null)
        {
            trace.onAnswered(b.tag(0), b.recordCount, error);
        }
        final boolean idempotent = idempotence.enabled();
        if (idempotence.fatalError() != 0)
        {
            fail(b, idempotence.fatalError());
        }
        else if (error == ClientErrors.NONE || (idempotent && error == ClientErrors.DUPLICATE_SEQUENCE_NUMBER))
        {
            if (idempotent)
            {
                idempotence.onAcknowledged(ps, b);
            }
            complete(b, baseOffset, ClientErrors.NONE); // a duplicate is kafka-clients' success too
        }
        else if (closed)
        {
            fail(b, ClientErrors.CLIENT_CLOSED);
        }
        else if (b.attempts <= config.retries && nowNs - b.deliveryDeadlineNs < 0 &&
            (idempotent ? idempotence.canRetry(ps, b, error, logStartOffset) : ClientErrors.retriable(error)))
        {
            b.retryAtNs = nowNs + config.retryBackoffNs;
            if (idempotent)
            {
                ps.sealed.insertBySequence(b);
            }
            else
            {
                ps.sealed.addFirst(b);
            }
        }
        else
        {
            fail(b, error);
        }
        if (error != ClientErrors.NONE && ClientErrors.refreshesMetadata(error))
        {
            metadata.requestUpdate();
        }
    }

    private void fail(final ProducerBatch b, final short error)
    {
        if (idempotence.enabled())
        {
            idempotence.onFailed(b.partition, b, error);
        }
        complete(b, -1, error);
    }

    private void complete(final ProducerBatch b, final long baseOffset, final short error)
    {
        final String topic = b.topic.name;
        final int partition = b.partition.partition;
        for (int i = 0; i < b.recordCount; i++)
        {
            handler.onComplete(b.tag(i), topic, partition, baseOffset < 0 ? -1 : baseOffset + i, error);
        }
        pending -= b.recordCount;
        pools.releaseBatch(b);
    }

    @Override
    public String roleName()
    {
        return "ferrite-producer";
    }

    /**
     * Closes the connections; every record not yet acknowledged completes with
     * {@link ClientErrors#CLIENT_CLOSED}. {@link #flush()} and run the duty cycle until {@link #pending()}
     * is 0 first to deliver them. Later sends return {@link #CLOSED}.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final long now = System.nanoTime();
        nowNs = now;
        metadata.shutdownAll(now, ClientErrors.CLIENT_CLOSED);
        for (int i = 0; i < metadata.topics.size(); i++)
        {
            final TopicState t = metadata.topics.get(i);
            for (final PartitionState ps : t.partitions)
            {
                if (ps.open != null)
                {
                    ps.sealQueued();
                }
                for (ProducerBatch b = ps.sealed.pollFirst(); b != null; b = ps.sealed.pollFirst())
                {
                    fail(b, ClientErrors.CLIENT_CLOSED);
                }
            }
        }
    }

    @Override
    public void onClose()
    {
        close();
    }
}
