package io.ferrite.broker;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.api.AclHandlers;
import io.ferrite.broker.api.SaslHandlers;
import io.ferrite.broker.api.ClientQuotaHandlers;
import io.ferrite.broker.api.ScramCredentialHandlers;
import io.ferrite.broker.api.AlterConfigsHandler;
import io.ferrite.broker.api.Apis;
import io.ferrite.broker.cluster.ClusterMode;
import io.ferrite.broker.api.CreatePartitionsHandler;
import io.ferrite.broker.api.CreateTopicsHandler;
import io.ferrite.broker.api.DelegationTokenHandlers;
import io.ferrite.broker.api.DeleteRecordsHandler;
import io.ferrite.broker.api.DeleteTopicsHandler;
import io.ferrite.broker.api.DescribeClusterHandler;
import io.ferrite.broker.api.DescribeLogDirsHandler;
import io.ferrite.broker.api.DescribeConfigsHandler;
import io.ferrite.broker.api.ElectLeadersHandler;
import io.ferrite.broker.api.FetchHandler;
import io.ferrite.broker.api.IncrementalAlterConfigsHandler;
import io.ferrite.broker.api.ListOffsetsHandler;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.api.OffsetForLeaderEpochHandler;
import io.ferrite.broker.api.ProduceHandler;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.PartitionCount;
import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.txn.TxnConfig;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.broker.txn.ProduceVerifier;
import io.ferrite.broker.txn.TxnHandlers;
import io.ferrite.broker.group.GroupHandlers;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.logthread.LogThreadRunner;
import io.ferrite.broker.logthread.LogThreadTasks;
import io.ferrite.broker.net.Acceptors;
import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.MetricsExports;
import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.broker.net.NetworkThread;
import io.ferrite.broker.acl.Authorizer;
import io.ferrite.broker.config.AuthorizerSettings;
import io.ferrite.broker.quota.ClientQuotas;
import io.ferrite.broker.scram.ScramCredentials;
import io.ferrite.broker.txn.EndTxnTiming;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogDirInUseException;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;

/**
 * One Ferrite node: the log manager, the topic registry and its writer the admin agent, the log
 * threads (single writers), the network threads and the acceptor, wired together from a {@link BrokerConfig}. {@link #close}
 * is the clean shutdown SIGTERM triggers: stop accepting, let the requests in progress finish,
 * stop the threads, then close the logs (flush, clean-shutdown marker).
 */
public final class Broker implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Broker.class);
    private static final int QUEUE_CAPACITY = 4096;

    private final BrokerConfig config;
    private final DynamicBrokerConfigs dynamic;
    private final String clusterId;
    private final LogManager logs;
    private final TopicRegistry topics;
    private final ReplicaLeadership leadership;
    /** The topics' single writer: creation, partitions, deletion, config changes. */
    private final AdminAgent admin;
    /** Its reserver thread stops at {@link #close}. */
    private final ProducerIds producerIds;
    private final LogThread[] logThreads;
    /** Each log thread's runner: the thread, its idle strategy and its error handler. */
    private final LogThreadRunner[] logThreadRunners;
    private final NetworkThread[] networkThreads;
    private final BrokerCounters counters; // the mapped counters (ferrite-stat reads them)
    private volatile MetricsExports exports; // the MBeans and the Prometheus endpoint: from start() to close()
    private final Acceptors acceptor; // one per listener
    private final CoordinatorRuntime coordinators;
    private final GroupCoordinator groups;
    private final TxnCoordinator transactions;
    private final InetSocketAddress address;
    private final ClusterMode cluster; // the node's part of a cluster (issue 14), or DISABLED: one node alone
    private volatile boolean closed;

    private Broker(final BrokerConfig config, final CoordinatorClock coordinatorClock) throws IOException
    {
        this.config = config;
        StartupChecks.logDirs(config);
        final Path firstDir = config.logDirs().get(0);
        this.clusterId = MetaProperties.clusterId(firstDir, config.nodeId());
        // the logs and the cleaner start with the dynamic values (in a cluster, the metadata image's, once it is read)
        this.dynamic = ClusterMode.requested(config) ? DynamicBrokerConfigs.forCluster(config, firstDir) :
            DynamicBrokerConfigs.load(config, firstDir);
        final int networkThreadCount = config.getInt(BrokerConfig.NUM_NETWORK_THREADS);
        this.networkThreads = new NetworkThread[networkThreadCount];
        this.cluster = ClusterMode.of(config, dynamic);
        // bound before the logs are opened: a port in use is told before a recovery that can take
        // minutes, and nothing has been logged yet; connections wait in the backlog until start()
        final ScramCredentials scram = new ScramCredentials(); // loaded below, once the log directory is the broker's
        this.acceptor = StartupChecks.bind(config, networkThreads, scram);
        final Authorizer authorizer = AuthorizerSettings.authorizer(config); // its ACLs loaded with the credentials
        final ClientQuotas quotas = new ClientQuotas(networkThreadCount); // loaded with them too (single node)
        acceptor.listeners().forEach(listener -> listener.authorizer(authorizer));
        final DurabilityWakeups wakeups = new DurabilityWakeups();
        final LogThreadTasks writerTasks = new LogThreadTasks();
        final LogManagerConfig logConfig = LogManagerConfig.of(config.logDirs(), dynamic.state().topicDefaults())
            .withWriteStrategy(config.writeStrategy())
            .withRetentionCheckIntervalMs(config.getLong(BrokerConfig.LOG_RETENTION_CHECK_INTERVAL_MS))
            .withProducerIdExpiration(config.getInt(BrokerConfig.PRODUCER_ID_EXPIRATION_MS),
                config.getInt(BrokerConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS), writerTasks)
            .withDurabilityListener(wakeups)
            .withCleaner(dynamic.effective().cleaner());
        try
        {
            this.logs = LogManager.open(logConfig);
            dynamic.applyTo(logs);
        }
        catch (final LogDirInUseException ex)
        {
            closeAfterFailure(acceptor, ex);
            throw new StartupException(StartupChecks.logDirSetting(config) + ": " + ex.dir()
                + " is in use by another process (another broker on the same directory?)", ex);
        }
        catch (final IOException | RuntimeException ex)
        {
            closeAfterFailure(acceptor, ex);
            throw ex;
        }
        try
        {
            StartupChecks.scramCredentials(scram, firstDir);
            StartupChecks.acls(authorizer, firstDir);
            if (cluster == ClusterMode.DISABLED) // a cluster's quotas belong in its metadata log: none there yet
            {
                StartupChecks.clientQuotas(quotas, firstDir);
            }
            final int logThreadCount = config.getInt(BrokerConfig.LOG_THREADS);
            if (cluster == ClusterMode.DISABLED)
            {
                // the first start on a Kafka 4.4 log directory: its topics' ids and configs, before the registry loads them
                io.ferrite.broker.topic.KafkaImport.runOnce(config, logs);
            }
            this.topics = new TopicRegistry(logs, logThreadCount);
            // a fresh counters file, once the log directory is ours (LogManager holds its lock)
            this.counters = StartupChecks.counters(firstDir, networkThreadCount, config.getBoolean(BrokerConfig.METRICS_RECORDING));
            topics.onChange(counters::topicsChanged);
            // loaded; the topics' single writer from its start on; alone, a node journals its creations (a cluster's metadata log does)
            this.admin = new AdminAgent(topics, io.ferrite.broker.admin.CreationReplay.open(config.logDirs(), topics, cluster == ClusterMode.DISABLED));
            topics.topics().forEach(t -> counters.topicsChanged(t, null)); // those loaded from disk
            this.producerIds = cluster.producerIds(firstDir); // alone: its file; in a cluster: the controller's blocks
            this.logThreads = new LogThread[logThreadCount];
            this.logThreadRunners = new LogThreadRunner[logThreadCount];
            final LogThread.Completion completion = new LogThread.Completion()
            {
                @Override
                public void completed(final int networkThread)
                {
                    if (networkThread < networkThreads.length)
                    {
                        networkThreads[networkThread].commandsReturned();
                    }
                    else if (coordinators != null)
                    {
                        coordinators.writesAnswered(); // the sender after the network threads' is the coordinators'
                    }
                }

                @Override
                public void highWatermarkAdvanced(final Partition partition)
                {
                    for (int n = 0; n < networkThreads.length; n++)
                    {
                        if (partition.parkedBy(n))
                        {
                            networkThreads[n].wakeup();
                        }
                    }
                }
            };
            for (int i = 0; i < logThreadCount; i++)
            {
                // one sender per network thread, and the group coordinator's (its writes to __consumer_offsets) after them
                final LogThread logThread = new LogThread(i, networkThreadCount + 1, QUEUE_CAPACITY, completion);
                logThreads[i] = logThread;
                logThreadRunners[i] = new LogThreadRunner(logThread, idleStrategy(config));
            }
            wakeups.attach(topics, logThreads);
            writerTasks.attach(topics, logThreads);
            this.leadership = new ReplicaLeadership(topics, logThreads, config);
            this.coordinators = new CoordinatorRuntime(topics, admin, logThreads, networkThreadCount, coordinatorClock);
            this.groups = new GroupCoordinator(topics, groupSettings(config), coordinators);
            groups.counters(counters);
            this.transactions = new TxnCoordinator(topics, txnConfig(config, topics, groups.offsetsCount()), config.getInt(BrokerConfig.TRANSACTION_STATE_LOG_SEGMENT_BYTES),
                coordinators, producerIds);
            transactions.offsetsPartitionOf(groups::offsetsPartitionOf);
            cluster.coordinates(groups, transactions); // in a cluster: they follow their topics' leaders, nothing loaded now
            groups.load();
            transactions.load();
            coordinators.start();
            final int maxRequest = config.getInt(BrokerConfig.SOCKET_REQUEST_MAX_BYTES);
            final MetadataHandler[] metadata = new MetadataHandler[networkThreadCount];
            final TxnVerifier verifier = cluster.verifier(new ProduceVerifier(transactions,
                config.getInt(BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS)));
            for (int i = 0; i < networkThreadCount; i++)
            {
                final int thread = i;
                // what the admin agent and the log threads run to wake this network thread for an answer it waits for
                final Runnable waker = () -> networkThreads[thread].wakeup();
                final NetworkCounters netCounters = counters.network(i);
                metadata[i] = new MetadataHandler(topics, config.nodeId(), clusterId).counters(netCounters)
                    .autoCreate(config.getBoolean(BrokerConfig.AUTO_CREATE_TOPICS), config.getInt(BrokerConfig.NUM_PARTITIONS), admin, waker);
                // handlers (and their codecs' classes) are made on the first request for their API
                final Apis apis = new Apis().transactionVersion(transactions.config().transactionVersion())
                    .register(ApiKeys.METADATA, metadata[i])
                    .registerLazily(ApiKeys.CREATE_TOPICS, () -> new CreateTopicsHandler(topics, admin, waker, config))
                    .registerLazily(ApiKeys.DESCRIBE_CONFIGS, () -> new DescribeConfigsHandler(topics, dynamic))
                    .registerLazily(ApiKeys.ALTER_CONFIGS, () -> new AlterConfigsHandler(topics, admin, waker, dynamic))
                    .registerLazily(ApiKeys.INCREMENTAL_ALTER_CONFIGS, () -> new IncrementalAlterConfigsHandler(topics, admin, waker, dynamic))
                    .registerLazily(ApiKeys.LIST_OFFSETS, () -> new ListOffsetsHandler(topics))
                    .registerLazily(ApiKeys.PRODUCE, () -> new ProduceHandler(topics, logThreads, thread, verifier, waker, netCounters,
                        quotas))
                    .registerLazily(ApiKeys.FETCH, () -> new FetchHandler(topics, thread, config.getInt(BrokerConfig.FETCH_MAX_BYTES),
                        config.getInt(BrokerConfig.FETCH_INLINE_RECORD_BYTES), netCounters, quotas))
                    .registerLazily(ApiKeys.DELETE_TOPICS, () -> new DeleteTopicsHandler(topics, admin, waker,
                        config.getBoolean(BrokerConfig.DELETE_TOPIC_ENABLE), groups::topicDeleted))
                    .registerLazily(ApiKeys.CREATE_PARTITIONS, () -> new CreatePartitionsHandler(topics, admin, waker, config.nodeId()))
                    .registerLazily(ApiKeys.DELETE_RECORDS, () -> new DeleteRecordsHandler(topics, logThreads, waker))
                    .registerLazily(ApiKeys.OFFSET_FOR_LEADER_EPOCH, () -> new OffsetForLeaderEpochHandler(topics))
                    .registerLazily(ApiKeys.DESCRIBE_CLUSTER, () -> new DescribeClusterHandler(config.nodeId(), clusterId, metadata[thread]))
                    .registerLazily(ApiKeys.DESCRIBE_LOG_DIRS, () -> new DescribeLogDirsHandler(topics, config.logDirs()))
                    .registerLazily(ApiKeys.ELECT_LEADERS, () -> new ElectLeadersHandler(topics)); // cluster mode: forwarded
                GroupHandlers.register(apis, groups, transactions, verifier, topics, config.nodeId(), metadata[i], waker);
                TxnHandlers.register(apis, transactions, coordinators, logThreads, topics, producerIds, waker);
                SaslHandlers.register(apis); // ILLEGAL_SASL_STATE but while a SASL connection authenticates
                AclHandlers.register(apis, admin, waker); // no authorizer: SECURITY_DISABLED, as a Kafka without one
                DelegationTokenHandlers.register(apis); // PLAINTEXT only: not allowed, as Kafka on PLAINTEXT
                if (cluster == ClusterMode.DISABLED) // a cluster's credentials belong in its metadata log: not served there yet
                {
                    ScramCredentialHandlers.register(apis, scram, admin, waker);
                    ClientQuotaHandlers.register(apis, quotas, admin, waker);
                }
                cluster.register(apis, waker, metadata[i]);
                networkThreads[i] = new NetworkThread(i, apis, maxRequest, netCounters, NetworkThread.directBudget(networkThreadCount));
                networkThreads[i].logThreads(logThreads);
            }
            this.address = acceptor.address(0);
            StartupChecks.advertise(config, acceptor, metadata);
        }
        catch (final IOException | RuntimeException ex)
        {
            closeAfterFailure(cluster, ex); // the transaction markers' sender thread, started by coordinates
            closeAfterFailure(acceptor, ex);
            closeAfterFailure(logs, ex);
            throw ex;
        }
    }

    /** Closes what a failed start opened; a failure to close goes on the start's failure, never in its place. */
    private static void closeAfterFailure(final AutoCloseable opened, final Exception failure)
    {
        try
        {
            opened.close();
        }
        catch (final Exception ex)
        {
            failure.addSuppressed(ex);
        }
    }

    /** Opens the logs, binds the listener and starts every thread. */
    public static Broker start(final BrokerConfig config) throws IOException
    {
        return start(config, CoordinatorClock.system());
    }

    /**
     * {@link #start(BrokerConfig)} with the group and transaction coordinators' clock given: a test moves it (a
     * transaction's timeout, a session's expiry come without waiting them out); production uses the system clocks.
     */
    public static Broker start(final BrokerConfig config, final CoordinatorClock coordinatorClock) throws IOException
    {
        final Broker broker = new Broker(config, coordinatorClock);
        for (final LogThreadRunner runner : broker.logThreadRunners)
        {
            runner.start();
        }
        broker.admin.start();
        for (final NetworkThread t : broker.networkThreads)
        {
            t.start();
        }
        broker.cluster.start(broker.topics, broker.admin, broker.leadership, broker::executeOnOwner, broker); // joined when back
        broker.acceptor.start();
        broker.exports = StartupChecks.exports(config, broker, broker.cluster == ClusterMode.DISABLED);
        LOG.info("Ferrite node {} of cluster {} listening on {} ({} topics in {})", config.nodeId(), broker.clusterId,
            broker.address, broker.topics.topics().size(), config.logDirs());
        return broker;
    }

    /** Where the first listener is bound (the real port when 0 was configured). */
    public InetSocketAddress address()
    {
        return address;
    }

    /** Where the listener named {@code name} (upper case) is bound, or null: none of that name. */
    public InetSocketAddress address(final String name) throws IOException
    {
        return acceptor.address(name);
    }

    /** Network thread {@code i} (0 to num.network.threads - 1), for its counters. */
    public NetworkThread networkThread(final int i)
    {
        return networkThreads[i];
    }

    /** The broker's counters (the counters file in the first log directory). */
    public BrokerCounters counters()
    {
        return counters;
    }

    /** Connections open now, over all network threads (approximate while they change). */
    public int openConnections()
    {
        int n = 0;
        for (final NetworkThread t : networkThreads)
        {
            n += t.connections();
        }
        return n;
    }

    public String clusterId()
    {
        return clusterId;
    }

    /** Leadership of partitions with followers: set without a controller until the controller integration sets it. */
    public ReplicaLeadership leadership()
    {
        return leadership;
    }

    /** The topics, to read (their writer is {@link #admin()}). */
    public TopicRegistry topics()
    {
        return topics;
    }

    /** The admin agent: the topics' single writer (an embedding application creates topics through it). */
    public AdminAgent admin()
    {
        return admin;
    }

    public LogManager logs()
    {
        return logs;
    }

    public BrokerConfig config()
    {
        return config;
    }

    /**
     * The transaction coordinator's settings. The partition count of {@code __transaction_state} is fixed once
     * ({@link PartitionCount}): alone, at the topic's first sight (the load's replay if it exists, else its creation);
     * in a cluster, at the node's first metadata image. Nothing here fixes it: a cluster's node must not fix a stale
     * local count before it joins. AddOffsetsToTxn's partition of a group is the group coordinator's count ({@code
     * groups::offsetsPartitionOf}); the int here is {@code offsets.topic.num.partitions}, read by nothing else.
     */
    private static TxnConfig txnConfig(final BrokerConfig config, final TopicRegistry topics, final PartitionCount offsets)
    {
        final PartitionCount stateLog = PartitionCount.inRegistry(topics, TxnCoordinator.TOPIC,
            BrokerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS, config.getInt(BrokerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS));
        return new TxnConfig(config.getInt(BrokerConfig.TRANSACTION_MAX_TIMEOUT_MS), stateLog, offsets.configured(),
            config.getInt(BrokerConfig.TRANSACTIONAL_ID_EXPIRATION_MS), (short)2, config.getInt(BrokerConfig.TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS));
    }

    private static GroupCoordinator.Settings groupSettings(final BrokerConfig config)
    {
        return new GroupCoordinator.Settings(config.getInt(BrokerConfig.GROUP_MIN_SESSION_TIMEOUT_MS),
            config.getInt(BrokerConfig.GROUP_MAX_SESSION_TIMEOUT_MS), config.getInt(BrokerConfig.GROUP_INITIAL_REBALANCE_DELAY_MS),
            config.getInt(BrokerConfig.GROUP_MAX_SIZE), config.values().containsKey(BrokerConfig.INTERNAL_OFFSETS_RETENTION_MS) ?
                config.getLong(BrokerConfig.INTERNAL_OFFSETS_RETENTION_MS) : config.getInt(BrokerConfig.OFFSETS_RETENTION_MINUTES) * 60_000L,
            config.getLong(BrokerConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS), config.getInt(BrokerConfig.OFFSETS_TOPIC_NUM_PARTITIONS),
            config.getInt(BrokerConfig.OFFSETS_TOPIC_SEGMENT_BYTES), config.getInt(BrokerConfig.OFFSET_METADATA_MAX_BYTES));
    }

    /** The group coordinator (for tests and metrics). */
    public GroupCoordinator groups()
    {
        return groups;
    }

    private static IdleStrategy idleStrategy(final BrokerConfig config)
    {
        return idleStrategy(config.getString(BrokerConfig.IDLE_STRATEGY));
    }

    /** A log thread's idle strategy of {@code ferrite.idle.strategy}'s name (package-private for its test). */
    static IdleStrategy idleStrategy(final String name)
    {
        switch (name)
        {
            case "busy-spin": return new BusySpinIdleStrategy();
            case "sleep": return new SleepingMillisIdleStrategy(1);
            // spin briefly, then park 10 ms at a time; a network thread handing over work unparks
            // the idle log thread: no yields and no short timed parks burning a shared core
            case "park": return new BackoffIdleStrategy(100, 0, 10_000_000, 10_000_000);
            // spin briefly, then park 1 us growing to 1 ms (a network thread handing over work unparks it). No
            // yields: Linux's EEVDF scheduler moves a task that yields behind every other runnable one for a
            // slice, and a command that arrives meanwhile waits that slice out, since a runnable thread is not
            // woken. With the log cleaner busy on one of 2 cores (or a build), a produce waited behind it: with
            // 10 yields a probe producer's p50 went 0.15 -> 1-5 ms while the cleaner ran, without them it stays
            // (jmh-results/profiles.md, "Issue 13"; the coordinators' agent dropped its yields for the same reason)
            default: return new BackoffIdleStrategy(100, 0, 1_000, 1_000_000);
        }
    }

    /**
     * Clean shutdown: no new connections, requests in progress answered (waiting up to a few
     * seconds for them), threads stopped, logs flushed and marked clean.
     */
    @Override
    public synchronized void close() throws IOException
    {
        if (closed)
        {
            return;
        }
        closed = true;
        LOG.info("shutting down");
        if (exports != null)
        {
            exports.close(); // first: nothing outside reads a counter or a log after this (they close, it is unmapped)
        }
        if (EndTxnTiming.ENABLED)
        {
            LOG.info(EndTxnTiming.report());
        }
        cluster.close(); // Kafka's order: the controlled shutdown first, while this node still serves
        acceptor.close();
        leadership.close(); // the follower fetchers, before the log threads they hand records to
        for (final NetworkThread t : networkThreads)
        {
            t.close();
        }
        coordinators.close(); // after the network threads, whose group answers under way wait for it
        admin.close(); // after the network threads and the group coordinator, whose answers or writes may wait for it
        producerIds.close(); // after the network threads and the coordinators, which take ids
        for (final LogThread t : logThreads)
        {
            t.requestClose(); // all at once: their ends then run side by side
        }
        for (final LogThreadRunner runner : logThreadRunners)
        {
            runner.close(); // the agent's onClose answers what it still had
        }
        logs.close();
        counters.close(); // nothing writes a counter any more: its threads and the admin agent stopped
        LOG.info("shut down cleanly");
    }

    /** For tests: commands waiting for log thread {@code owner}. */
    public int commandsWaitingOn(final int owner)
    {
        return logThreads[owner].waitingCommands();
    }

    /** Runs {@code task} on the log thread that owns partitions of owner {@code owner}. */
    public void executeOnOwner(final int owner, final Runnable task)
    {
        logThreads[owner].execute(task);
    }
}
