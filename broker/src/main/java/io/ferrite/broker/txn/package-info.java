/**
 * The transaction coordinator's core (issue 12), as pure logic: no threads, no I/O, every rule a
 * function of the state, the request's fields and the time. Kafka 4.4's coordinator
 * ({@code kafka.coordinator.transaction.TransactionCoordinator}, {@code TransactionStateManager},
 * {@code org.apache.kafka.coordinator.transaction.TransactionMetadata}) is the reference.
 *
 * <h2>What is here</h2>
 * <ul>
 *   <li>{@link io.ferrite.broker.txn.TxnRecords}: {@code __transaction_state} keys and values (v0 and v1), byte for byte as
 *       Kafka's generated serializer.</li>
 *   <li>{@link io.ferrite.broker.txn.TxnState}, {@link io.ferrite.broker.txn.TxnMetadata} (with
 *       {@code TxnTransitions}): the state machine. A transition is prepared (pending), then
 *       completed when its record is written or cancelled when the write fails.</li>
 *   <li>The request rules, each returning a {@link io.ferrite.broker.txn.TxnDecision}: an answer now, or a
 *       {@link io.ferrite.broker.txn.TxnWrite} to write first — {@link io.ferrite.broker.txn.InitProducerIdRules},
 *       {@link io.ferrite.broker.txn.AddPartitionsRules} (AddPartitionsToTxn v0-5, AddOffsetsToTxn),
 *       {@link io.ferrite.broker.txn.EndTxnRules} (v0-5), {@link io.ferrite.broker.txn.TxnQueries}
 *       (DescribeTransactions, ListTransactions), {@link io.ferrite.broker.txn.TxnSweeps} (timeout aborts, id expiry);
 *       {@link io.ferrite.broker.txn.TxnErrors} translates errors by request version.</li>
 *   <li>{@link io.ferrite.broker.txn.TxnWrites}: a write's result → {@link io.ferrite.broker.txn.TxnOutcome} (the answer,
 *       the {@link io.ferrite.broker.txn.MarkerJob} to run, a Complete* to write again).</li>
 *   <li>{@link io.ferrite.broker.txn.TxnCache}: the transactions by id and which partitions are served or loading;
 *       {@link io.ferrite.broker.txn.TxnReplay}: a partition's log read back into it at load.</li>
 * </ul>
 *
 * <h2>How an agent drives it</h2>
 * One thread owns the cache: the coordinators' agent ({@code coordinator.CoordinatorAgent}, which owns
 * the groups too; the transaction coordinator runs on it through {@code coordinator.CoordinatorRuntime}: {@link io.ferrite.broker.txn.TxnCoordinator}).
 * A request: call its rule; an {@code Answer} is sent at once; a {@code TxnWrite} is written as one record (one batch: magic 2,
 * uncompressed, producer id -1, timestamp now; key {@code write.key()}, value
 * {@code write.value(config.valueVersion())}) to partition {@code config.partitionFor(id)} through its
 * log thread, and its answer goes to {@code TxnWrites.written}/{@code failed}; the outcome's answer
 * is sent, its markers written to each partition (then the job's Complete* written the same way). At
 * start each partition is marked {@code loading}, replayed, {@code loaded}, and its
 * {@code toComplete} jobs run. Producer ids come from a {@link io.ferrite.broker.txn.ProducerIdSource}
 * ({@code ProducerIds}, which reserves the next block of ids ahead on a thread of its own: the agent
 * never waits for the disk); no id yet answers COORDINATOR_LOAD_IN_PROGRESS (retriable), a failed
 * reservation KAFKA_STORAGE_ERROR, as the idempotent InitProducerId does.
 *
 * <h2>Also here</h2>
 * {@link io.ferrite.broker.txn.TxnCoordinator}, the agent's side (writes through the log threads,
 * marker runs, the timers, the load), and one handler per API ({@link io.ferrite.broker.txn.TxnHandlers}).
 *
 * <p>TxnOffsetCommit is the group coordinator's ({@code group.TxnOffsetCommits}, on the same agent):
 * it calls {@link io.ferrite.broker.txn.TxnCoordinator#verify} or {@code addPartitions} directly, or in a cluster,
 * when the transactional id's coordinator is another node, asks that node through the produce's
 * {@link io.ferrite.broker.txn.RemoteVerifier} ({@code group.RemoteTxnCheck}).
 *
 * <h2>Not here yet</h2>
 * InitProducerId v6's two-phase commit (KIP-939; Kafka 4.4 does not advertise it). The produce's
 * verification with the coordinator (Kafka's "hanging transaction" guard) is
 * {@link io.ferrite.broker.txn.ProduceVerifier}, and in a cluster, when the transactional id's coordinator is another
 * node, {@link io.ferrite.broker.txn.RemoteVerifier} (AddPartitionsToTxn v5 over
 * {@link io.ferrite.broker.txn.NodeRequests}, the sender {@link io.ferrite.broker.txn.RemoteMarkers} uses too).
 */
package io.ferrite.broker.txn;
