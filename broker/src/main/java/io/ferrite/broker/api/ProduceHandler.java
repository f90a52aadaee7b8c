package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.quota.ClientQuotas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ProduceRequestDecoder;
import io.ferrite.wire.message.ProduceResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Arrays;

import static io.ferrite.wire.record.RecordBatchDescriptor.ATTRIBUTES_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.NO_PRODUCER_ID;
import static io.ferrite.wire.record.RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.PRODUCER_ID_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.TRANSACTIONAL_MASK;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Produce: each partition's batch goes, in place in the connection's input buffer, to the log thread
 * that owns the partition (one {@link AppendCommand} per partition, from a pool the connection
 * keeps); the response is written once every command has come back. Checks made here, before any
 * log thread sees the request, are Kafka's request-level ones: acks must be -1, 0 or 1
 * (INVALID_REQUIRED_ACKS), the topic and partition must exist (UNKNOWN_TOPIC_OR_PARTITION, or
 * UNKNOWN_TOPIC_ID by id), a partition must carry records (INVALID_RECORD), internal topics take no
 * client writes (INVALID_TOPIC_EXCEPTION), transactional records need the request's transactional id
 * (else the whole request is TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers an unauthorized
 * one, and nothing is appended). The log checks the batch itself, and a transactional
 * batch against the partition's transaction state (a non-transactional one while the producer's
 * transaction is open: INVALID_TXN_STATE). A transactional batch that would open its producer's
 * transaction on the partition comes back from its log thread to be verified with the transaction
 * coordinator first (Kafka's "hanging transaction" guard, KIP-890: {@link ProduceVerification}),
 * then goes again with the guard its log thread gave it; batches of a transaction already open
 * there, and non-transactional ones, are appended at once.
 *
 * <p>min.insync.replicas is the log thread's to check: on one node Kafka 4.4 caps it by the replication
 * factor (KIP-966), which is 1, so acks=all is always satisfiable; on a partition this node leads
 * with followers the log thread refuses an acks=all batch while the ISR is below it
 * (NOT_ENOUGH_REPLICAS, nothing appended) and answers it once the high watermark passes the batch
 * (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank meanwhile), or REQUEST_TIMED_OUT when
 * {@code timeout_ms} ends first. With acks=0 there is no
 * response; an error then closes the connection, as Kafka does, so the client notices.
 */
public final class ProduceHandler implements RequestHandler
{
    private final TopicRegistry topics;
    private final LogThread[] logThreads;
    private final int networkThread;
    private final TxnVerifier verifier;
    /** Wakes this network thread when the coordinator answers a verification. */
    private final Runnable waker;
    private final NetworkCounters counters;
    private final ClientQuotas quotas;

    /** @param quotas the broker's client quotas: a {@code producer_byte_rate} throttles the answer */
    public ProduceHandler(final TopicRegistry topics, final LogThread[] logThreads, final int networkThread,
        final TxnVerifier verifier, final Runnable waker, final NetworkCounters counters, final ClientQuotas quotas)
    {
        this.quotas = quotas;
        this.counters = counters;
        this.topics = topics;
        this.logThreads = logThreads;
        this.networkThread = networkThread;
        this.verifier = verifier;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        Request request = (Request)connection.state(ApiKeys.PRODUCE.id);
        if (request == null)
        {
            request = new Request(connection);
            connection.state(ApiKeys.PRODUCE.id, request);
        }
        return request.start(version, offset, limit, outOffset);
    }

    /**
     * A closed log's partition that no topic has any more (its topic deleted): Kafka answers a produce
     * for a partition its metadata does not have UNKNOWN_TOPIC_OR_PARTITION, and NOT_LEADER_OR_FOLLOWER
     * for one it has (a close at shutdown, or the name made again since: the client's retry then finds
     * the new topic, where Kafka would have appended to it). Off the hot path: a closed log's append only.
     */
    private boolean gone(final Partition partition)
    {
        final Topic now = topics.topic(partition.topic);
        return now == null || now.partition(partition.index) == null;
    }

    /** One connection's produce request in progress (a connection has one request at a time). */
    private final class Request implements PendingResponse, AppendCommand.Listener
    {
        private final Connection connection;
        private final ProduceRequestDecoder decoder = new ProduceRequestDecoder();
        private final ProduceResponseEncoder encoder = new ProduceResponseEncoder();
        private short version;
        private int offset;
        private int limit;
        private short acks;
        private int slots;
        private int outstanding;
        private int unsent;
        private boolean failed;
        // per partition slot, in request order
        private short[] error = new short[8];
        private AppendCommand[] commands = new AppendCommand[8];
        private boolean[] sent = new boolean[8];
        private String[] message = new String[8];
        private AppendCommand[] pool = new AppendCommand[8];
        private int pooled;
        /** The partitions whose batch waits for the coordinator's verification ({@link ProduceVerification}). */
        private final ProduceVerification verification = new ProduceVerification();

        Request(final Connection connection)
        {
            this.connection = connection;
        }

        int start(final short version, final int offset, final int limit, final int outOffset)
        {
            this.version = version;
            this.offset = offset;
            this.limit = limit;
            decoder.wrap(connection.in, offset, limit, version);
            acks = decoder.acks();
            final int timeoutMs = Math.max(0, decoder.timeoutMs());
            slots = 0;
            outstanding = 0;
            unsent = 0;
            failed = false;
            verification.reset();
            boolean transactionalBatch = false;
            // the (producer id, epoch) of the transactional batches: Kafka's ReplicaManager refuses a request naming two
            long producerId = NO_PRODUCER_ID;
            short producerEpoch = 0;
            boolean severalProducers = false;
            final boolean validAcks = acks == -1 || acks == 0 || acks == 1;
            final ProduceRequestDecoder.TopicProduceData t = decoder.topicData();
            while (t.hasNext())
            {
                t.next();
                final Topic topic = PartitionLookup.find(topics, version >= 13, t.topicIdMostSignificantBits(),
                    t.topicIdLeastSignificantBits(), connection.in, t.nameOffset(), t.nameLength());
                final boolean authorized = Access.topic(connection, AclCodes.WRITE, topic, connection.in, t.nameOffset(),
                    version >= 13 ? -1 : t.nameLength()); // v13: by id, no name to read
                final ProduceRequestDecoder.PartitionProduceData p = t.partitionData();
                while (p.hasNext())
                {
                    p.next();
                    final int slot = slots++;
                    ensureSlots(slots);
                    commands[slot] = null;
                    message[slot] = null;
                    final Partition partition = PartitionLookup.partition(topic, p.index());
                    final short check;
                    if (!authorized) // Kafka's KafkaApis checks WRITE before ReplicaManager looks at acks or the partition
                    {
                        check = Errors.TOPIC_AUTHORIZATION_FAILED;
                    }
                    else if (!validAcks)
                    {
                        check = Errors.INVALID_REQUIRED_ACKS;
                    }
                    else if (partition == null)
                    {
                        check = PartitionLookup.notFound(topic, version >= 13, p.index());
                    }
                    else if (topic.isInternal())
                    {
                        check = Errors.INVALID_TOPIC_EXCEPTION;
                    }
                    else if (p.recordsLength() <= 0)
                    {
                        check = Errors.INVALID_RECORD;
                        message[slot] = "Produce requests with version 3+ must have exactly one record batch per partition";
                    }
                    else
                    {
                        check = Errors.NONE;
                    }
                    // Kafka looks for transactional records in every partition's batch before any check (review L3): a
                    // transactional request is refused whole for its transactional id before its topics are
                    final boolean transactional = p.recordsLength() > ATTRIBUTES_OFFSET + 1 &&
                        (connection.in.getShort(p.recordsOffset() + ATTRIBUTES_OFFSET, BIG_ENDIAN) & TRANSACTIONAL_MASK) != 0;
                    transactionalBatch |= transactional;
                    error[slot] = check;
                    if (check != Errors.NONE)
                    {
                        failed = true;
                        continue;
                    }
                    if (transactional && p.recordsLength() >= PRODUCER_EPOCH_OFFSET + 2)
                    {
                        final long pid = connection.in.getLong(p.recordsOffset() + PRODUCER_ID_OFFSET, BIG_ENDIAN);
                        final short epoch = connection.in.getShort(p.recordsOffset() + PRODUCER_EPOCH_OFFSET, BIG_ENDIAN);
                        if (pid != NO_PRODUCER_ID) // Kafka: hasProducerId() && isTransactional()
                        {
                            severalProducers |= producerId != NO_PRODUCER_ID && (pid != producerId || epoch != producerEpoch);
                            producerId = pid;
                            producerEpoch = epoch;
                        }
                    }
                    final AppendCommand command = take();
                    command.set(networkThread, this, slot, partition, connection.in, p.recordsOffset(), p.recordsLength(), acks);
                    command.timeoutMs = timeoutMs;
                    if (transactional)
                    {
                        command.verification = ProduceVerification.start(version);
                    }
                    commands[slot] = command;
                    sent[slot] = false;
                    outstanding++;
                    unsent++;
                }
            }
            // Kafka: transactional records need WRITE on the request's transactional id (decided from its bytes: no allocation)
            if (transactionalBatch && (decoder.transactionalIdIsNull() || !Access.transactionalId(connection, AclCodes.WRITE,
                connection.in, decoder.transactionalIdOffset(), decoder.transactionalIdLength())))
            {
                refuseAll(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null);
            }
            else if (severalProducers)
            {
                // Kafka's ReplicaManager.handleProduceAppend checks every transactional batch before anything is
                // appended or verified, and throws: every partition of the request gets the error (ProduceRequest.getErrorResponse)
                refuseAll(Errors.INVALID_PRODUCER_ID_MAPPING, "Transactional records contained more than one producer ID");
            }
            send();
            if (outstanding == 0)
            {
                return respond(outOffset);
            }
            connection.defer(this);
            return DEFERRED;
        }

        /**
         * Kafka's answer to transactional records without a transactional id (KafkaApis: not authorized
         * for one), or of more than one producer: the whole request, every partition, and nothing
         * appended; no command is sent yet.
         */
        private void refuseAll(final short refusal, final String why)
        {
            for (int slot = 0; slot < slots; slot++)
            {
                if (commands[slot] != null)
                {
                    pool[pooled++] = commands[slot];
                    commands[slot] = null;
                }
                error[slot] = refusal;
                message[slot] = why;
            }
            outstanding = 0;
            unsent = 0;
            failed = true;
        }

        /** Offers the commands not yet taken by their log threads (a full queue is retried on the next poll). */
        private void send()
        {
            if (unsent == 0)
            {
                return;
            }
            for (int slot = 0; slot < slots; slot++)
            {
                final AppendCommand command = commands[slot];
                if (command != null && !sent[slot])
                {
                    if (!logThreads[command.partition.owner].offer(networkThread, command))
                    {
                        return;
                    }
                    sent[slot] = true;
                    unsent--;
                }
            }
        }

        @Override
        public void appended(final AppendCommand command)
        {
            final AppendResult r = command.result;
            final int slot = command.slot;
            if (r.status == AppendResult.VERIFICATION_NEEDED)
            {
                command.verification = r.verificationGuard; // its next append, once verified
                verification.add(slot);
                return; // still outstanding
            }
            error[slot] = r.status == AppendResult.LOG_CLOSED && gone(command.partition) ?
                Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.ofAppend(r.status);
            if (!r.succeeded())
            {
                failed = true;
                message[slot] = r.message;
            }
            else if (r.status == AppendResult.OK && command.partition.counters() != null) // a duplicate appends nothing
            {
                counters.produced(command.partition.counters(), r.lastOffset - r.firstOffset + 1, command.length);
            }
            outstanding--;
        }

        @Override
        public int poll(final Connection connection, final int outOffset, final long nowMs)
        {
            if (verification.waiting() > 0)
            {
                verify();
            }
            send();
            return outstanding > 0 ? NOT_READY : respond(outOffset);
        }

        /**
         * The batches the log threads sent back to be verified: asked about together once every
         * other command is back (one question per request, as Kafka batches a request's partitions),
         * then each appended again with its guard, or answered the coordinator's error translated
         * for this produce version.
         */
        private void verify()
        {
            if (!verification.asked())
            {
                if (outstanding != verification.waiting())
                {
                    return;
                }
                decoder.wrap(connection.in, offset, limit, version);
                verification.ask(verifier, decoder.transactionalId(), commands, connection.in, version >= 12, waker);
                // answered now when refused (the agent's queue full or stopped): nothing would wake us
            }
            if (!verification.answered())
            {
                return;
            }
            for (int i = 0, n = verification.waiting(); i < n; i++)
            {
                final int slot = verification.slot(i);
                final short e = verification.error(i, version);
                if (e == Errors.NONE)
                {
                    sent[slot] = false;
                    unsent++;
                }
                else
                {
                    error[slot] = e;
                    message[slot] = verification.message(i, e);
                    failed = true;
                    outstanding--;
                }
            }
            verification.reset();
        }

        @Override
        public long deadlineMs()
        {
            // commands in flight read the request's bytes: the request cannot be abandoned, and the
            // log threads always answer (a closed log answers at once)
            return unsent > 0 ? System.currentTimeMillis() + 1 : Long.MAX_VALUE;
        }

        private int respond(final int outOffset)
        {
            for (int slot = 0; failed && slot < slots; slot++)
            {
                counters.error(ApiKeys.PRODUCE, error[slot]);
            }
            // Kafka records every produce's size when it is answered; a throttle mutes the connection once the answer is
            // written, and with acks=0 (no answer) it is only that
            final int throttleMs = quotas.produced(connection, networkThread);
            connection.throttle(throttleMs);
            if (acks == 0)
            {
                release();
                return failed ? CLOSE : NO_RESPONSE;
            }
            decoder.wrap(connection.in, offset, limit, version);
            encoder.wrap(connection.out, outOffset, version);
            final ProduceRequestDecoder.TopicProduceData t = decoder.topicData();
            final ProduceResponseEncoder.TopicProduceResponse rt = encoder.responses(t.elementCount());
            int slot = 0;
            while (t.hasNext())
            {
                t.next();
                rt.next();
                if (version >= 13)
                {
                    rt.topicId(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                }
                else
                {
                    rt.name(connection.in, t.nameOffset(), t.nameLength());
                }
                final ProduceRequestDecoder.PartitionProduceData p = t.partitionData();
                final ProduceResponseEncoder.PartitionProduceResponse rp = rt.partitionResponses(p.elementCount());
                while (p.hasNext())
                {
                    p.next();
                    final AppendCommand command = commands[slot];
                    final AppendResult r = command == null ? null : command.result;
                    final boolean ok = error[slot] == Errors.NONE;
                    rp.next().index(p.index()).errorCode(error[slot])
                        .baseOffset(ok ? r.firstOffset : -1)
                        .logAppendTimeMs(ok ? r.logAppendTime : -1)
                        .logStartOffset(r != null && r.logStartOffset >= 0 ? r.logStartOffset : -1);
                    final boolean recordError = r != null && r.recordIndex >= 0 &&
                        (r.status == AppendResult.INVALID_TIMESTAMP || r.status == AppendResult.INVALID_RECORD);
                    if (recordError)
                    {
                        rp.recordErrors(1).next().batchIndex(r.recordIndex).batchIndexErrorMessage(message[slot]);
                    }
                    else
                    {
                        rp.recordErrors(0);
                    }
                    rp.errorMessage(message[slot]);
                    slot++;
                }
            }
            encoder.throttleTimeMs(throttleMs);
            release();
            return outOffset + encoder.finish();
        }

        /** Returns the commands to the pool and forgets the messages. */
        private void release()
        {
            for (int slot = 0; slot < slots; slot++)
            {
                if (commands[slot] != null)
                {
                    commands[slot].buffer = null;
                    pool[pooled++] = commands[slot];
                    commands[slot] = null;
                }
                message[slot] = null;
            }
        }

        private AppendCommand take()
        {
            return pooled > 0 ? pool[--pooled] : new AppendCommand();
        }

        private void ensureSlots(final int n)
        {
            if (n > error.length)
            {
                final int size = Math.max(n, error.length * 2);
                error = Arrays.copyOf(error, size);
                commands = Arrays.copyOf(commands, size);
                sent = Arrays.copyOf(sent, size);
                message = Arrays.copyOf(message, size);
                pool = Arrays.copyOf(pool, size);
            }
        }
    }
}
