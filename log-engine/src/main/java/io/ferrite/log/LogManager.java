package io.ferrite.log;

import io.ferrite.log.config.DurableFile;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The logs of one process: opens the log directories (recovering what an unclean stop left),
 * creates and deletes partition logs, and runs the background work — group commit per directory,
 * flushes of rolled segments, retention, flush.ms, checkpoints. This is the embedded API:
 * <pre>
 *   try (LogManager logs = LogManager.open(LogManagerConfig.of(Path.of("data"))))
 *   {
 *       PartitionLog log = logs.createLog("orders", 0, Map.of("segment.bytes", "268435456"));
 *       log.append(buffer, 0, length, result);
 *       log.read(offset, 1 << 20, log.logEndOffset(), true, region);
 *   }
 * </pre>
 * Each directory is locked ({@code .lock}) against a second process; a clean close leaves Kafka's
 * {@code .kafka_cleanshutdown} marker, which lets the next open skip recovery.
 *
 * <p>This class owns the directories and the partition map; the threads of the background work are
 * {@link LogBackgroundWork}'s, each directory's {@link GroupCommitter}'s (reached by the logs through
 * their {@link DirEnvironment}) and the {@link LogCleaner}'s.
 */
public final class LogManager implements AutoCloseable
{
    static final String CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown";
    static final String LOCK_FILE = ".lock";
    private static final Logger LOG = LoggerFactory.getLogger(LogManager.class);

    private final LogManagerConfig config;
    private final ConcurrentHashMap<String, PartitionLog> logs = new ConcurrentHashMap<>();
    /** The logs as an array for the background loops: iterating it allocates nothing (the map's iterators would). */
    private volatile PartitionLog[] logArray = new PartitionLog[0];
    private final Map<Path, GroupCommitter> committers = new LinkedHashMap<>();
    /** The group committers' threads, once started. */
    private final List<AgentRunner> committerRunners = new ArrayList<>();
    private final Map<Path, FileChannel> lockChannels = new HashMap<>();
    private final Map<Path, FileLock> locks = new HashMap<>();
    private final Map<Path, LogEnvironment> environments = new HashMap<>();
    private final LogBackgroundWork background;
    private final CreationFsyncs creationFsyncs = new CreationFsyncs();
    /** Orders checkpoint writes against a deletion's unpublishing ({@link #checkpointDir}). */
    private final Object checkpointLock = new Object();
    private final LogCleaner cleaner;
    /** The topic defaults every log's config starts from: replaced by {@link LogReconfiguration} (dynamic broker configs). */
    private volatile LogConfig defaults;
    private volatile boolean closed;

    private LogManager(final LogManagerConfig config, final boolean schedulerStepped)
    {
        this.config = config;
        this.background = new LogBackgroundWork(config, () -> logArray, schedulerStepped);
        this.cleaner = new LogCleaner(config, checkpointLock, () -> logArray, this::logsIn);
        this.defaults = config.defaultLogConfig();
    }

    /**
     * Opens (creating) the log directories and every partition log in them.
     *
     * @throws IOException when a directory is in use by another process or cannot be read
     */
    public static LogManager open(final LogManagerConfig config) throws IOException
    {
        return open(config, false);
    }

    /** For tests: {@code schedulerStepped}, the scheduler runs only when the test invokes {@link #background()}'s invoker. */
    static LogManager open(final LogManagerConfig config, final boolean schedulerStepped) throws IOException
    {
        final LogManager manager = new LogManager(config, schedulerStepped);
        try
        {
            for (final Path dir : config.logDirs())
            {
                manager.openDir(dir.toAbsolutePath().normalize());
            }
            manager.startBackgroundWork();
            return manager;
        }
        catch (final IOException | RuntimeException ex)
        {
            manager.closeQuietly();
            throw ex;
        }
    }

    private void openDir(final Path dir) throws IOException
    {
        Files.createDirectories(dir);
        final FileChannel lockChannel = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        final FileLock lock = lockChannel.tryLock();
        if (lock == null)
        {
            lockChannel.close();
            throw new LogDirInUseException(dir);
        }
        lockChannels.put(dir, lockChannel);
        locks.put(dir, lock);
        final String role = "ferrite-group-commit-" + committers.size();
        final GroupCommitter committer = new GroupCommitter(role, () -> logsIn(dir), new AgentErrors(role));
        committers.put(dir, committer);
        final LogEnvironment env = new DirEnvironment(committer, background, config.durabilityListener(),
            config.producerIdExpirationMs(), cleaner.manager(), () -> checkpointDir(dir));
        environments.put(dir, env);

        final Path marker = dir.resolve(CLEAN_SHUTDOWN_FILE);
        final boolean clean = Files.exists(marker);
        final Map<String, Long> recoveryPoints = OffsetCheckpoint.read(dir.resolve(OffsetCheckpoint.RECOVERY_POINTS));
        final Map<String, Long> logStarts = OffsetCheckpoint.read(dir.resolve(OffsetCheckpoint.LOG_START_OFFSETS));
        final List<PartitionDirs.Found> partitionDirs = PartitionDirs.list(dir); // deletions' leftovers removed
        for (final PartitionDirs.Found p : partitionDirs)
        {
            final String key = OffsetCheckpoint.key(p.topic(), p.partition());
            final LogConfig logConfig = defaults.inForce(PartitionOverrides.read(p.dir()));
            final PartitionLog log = LogLoader.load(p.topic(), p.partition(), p.dir(), logConfig, config.writeStrategy(), config.clock(), env,
                clean, recoveryPoints.getOrDefault(key, -1L), logStarts.getOrDefault(key, 0L));
            if (logs.putIfAbsent(key, log) != null)
            {
                log.close();
                throw new IOException("partition " + key + " is in two log directories");
            }
        }
        logArray = logs.values().toArray(new PartitionLog[0]); // once per directory: per partition it was O(N^2)
        if (!OffsetCheckpoint.onlyNames(key ->
        {
            final PartitionLog log = logs.get(key);
            return log != null && log.dir().getParent().equals(dir);
        }, recoveryPoints, logStarts))
        {
            // entries of logs that are gone (a deletion stopped between its rename and its checkpoint write):
            // dropped before anything can make a log of that name, which would take them after a crash
            checkpointDir(dir);
        }
        cleaner.load(dir);
        if (clean)
        {
            Files.delete(marker);
            DurableFile.fsyncDirectory(dir);
        }
        LOG.info("opened {} ({} partitions, {} shutdown)", dir, partitionDirs.size(), clean ? "clean" : "unclean");
    }

    private void startBackgroundWork()
    {
        for (final GroupCommitter committer : committers.values())
        {
            committerRunners.add(LogAgents.start(committer, committer.errors(),
                new SleepingIdleStrategy(GroupCommitter.IDLE_PARK_NS)));
        }
        background.start(this::checkpoint, this::runRetention,
            log -> environments.get(log.dir().getParent()).requestFlush(log));
        cleaner.start();
    }

    // ---- partitions ----

    /**
     * Creates a partition's log with topic config {@code overrides} on top of the defaults; its
     * directory's entry is durable (the log directory fsynced) when this returns.
     *
     * @throws IllegalArgumentException for an illegal topic name or partition, or one that exists
     * @throws io.ferrite.log.config.ConfigException for an invalid config
     */
    public PartitionLog createLog(final String topic, final int partition, final Map<String, String> overrides)
        throws IOException
    {
        return createLogs(topic, partition, partition + 1, overrides)[0];
    }

    /**
     * Creates partitions {@code from} to {@code to - 1} of a topic, all with topic config {@code
     * overrides}: every partition's directory is made and its log opened, each partition directory
     * fsynced, then each log directory they went to fsynced once (not once per partition), and only
     * then are they published, so {@link #log} finds none of them before they are durable. All or nothing: when
     * one fails, the logs opened so far are closed, the directories this call made are removed (one
     * it found in place is loaded, and left), and the failure is thrown.
     *
     * @throws IllegalArgumentException for an illegal topic name or partition, or one that exists
     * @throws io.ferrite.log.config.ConfigException for an invalid config
     */
    public PartitionLog[] createLogs(final String topic, final int from, final int to,
        final Map<String, String> overrides) throws IOException
    {
        return createLogs(topic, from, to, overrides, PartitionFiles.NONE);
    }

    /** As {@link #createLogs(String, int, int, Map)}, with {@code files} written in each new partition's directory. */
    public PartitionLog[] createLogs(final String topic, final int from, final int to,
        final Map<String, String> overrides, final PartitionFiles files) throws IOException
    {
        return createLogs(List.of(new NewLogs(topic, from, to, overrides, files)), () -> { }).madeOrThrow(0);
    }

    /**
     * {@link #createLogs(String, int, int, Map)} of several topics as one batch ({@link LogCreation}): every partition
     * opened with its files, several at a time, then their partition directories fsynced, then each log directory once: a
     * few rounds of fsyncs for many small topics, not a few per topic. Each entry all or nothing, published (in {@link
     * #log}) only once durable; the others go on when one fails. {@code beforeEach} runs on this thread before each entry
     * is taken up. Holds this manager's monitor throughout: config changes, deletions and a close wait for the batch.
     */
    public synchronized CreatedLogs createLogs(final List<NewLogs> batch, final Runnable beforeEach)
    {
        requireOpen();
        final LogConfig base = defaults;
        final CreatedLogs created = LogCreation.make(batch, beforeEach, new LogCreation.Context(logs::containsKey,
            base::inForce, creationFsyncs, config, PartitionDirs.countPerDir(committers.keySet(), logArray), environments));
        final PartitionLog[] before = logArray;
        final List<PartitionLog> added = new ArrayList<>();
        for (int e = 0; e < created.size(); e++)
        {
            final PartitionLog[] made = created.made(e);
            for (int i = 0; made != null && i < made.length; i++)
            {
                logs.put(OffsetCheckpoint.key(made[i].topic(), made[i].partition()), made[i]);
                added.add(made[i]);
            }
        }
        final PartitionLog[] after = Arrays.copyOf(before, before.length + added.size());
        for (int i = 0; i < added.size(); i++)
        {
            after[before.length + i] = added.get(i);
        }
        logArray = after; // appended to, not rebuilt from the map: creating N partitions is not O(N^2)
        return created;
    }

    /** The log of a partition, or null. */
    public PartitionLog log(final String topic, final int partition)
    {
        return logs.get(OffsetCheckpoint.key(topic, partition));
    }

    /** Group-commit rounds done so far, over every directory (each round is one fsync per log it covers). */
    public long groupCommitRounds()
    {
        long rounds = 0;
        for (final GroupCommitter c : committers.values())
        {
            rounds += c.rounds();
        }
        return rounds;
    }

    LogBackgroundWork background()
    {
        return background;
    }

    LogCleaner cleaner()
    {
        return cleaner;
    }

    void defaults(final LogConfig newDefaults)
    {
        defaults = newDefaults;
    }

    public Collection<PartitionLog> logs()
    {
        return Collections.unmodifiableCollection(logs.values());
    }

    /** Replaces a partition's topic overrides (persisted); new appends and background work see them. */
    public synchronized void updateConfig(final String topic, final int partition, final Map<String, String> overrides)
        throws IOException
    {
        final PartitionLog log = requireLog(topic, partition);
        final LogConfig logConfig = defaults.inForce(overrides);
        PartitionOverrides.write(log.dir(), overrides);
        log.updateConfig(logConfig);
    }

    /**
     * A partition's own topic config overrides, as stored: without the broker-level defaults
     * that its {@link PartitionLog#config()} has merged in (which a topic must not report as its
     * own overrides after a restart).
     */
    public Map<String, String> overrides(final String topic, final int partition) throws IOException
    {
        return PartitionOverrides.read(requireLog(topic, partition).dir());
    }

    /** {@link #deleteLogs} of one partition. */
    public void deleteLog(final String topic, final int partition) throws IOException
    {
        deleteLogs(topic, partition, partition + 1);
    }

    /**
     * Deletes partitions {@code from} to {@code to - 1} of a topic as one batch ({@link LogDeletion}):
     * each log closed (appends and claims answer LOG_CLOSED from now on) and its directory renamed to
     * {@code <topic>-<partition>.<uuid>-delete} at once, so that when this returns the names are free
     * for {@link #createLogs} and the renames are durable; one rebuild of the log array and one fsync
     * of each log directory for the whole batch. The segments' mappings stay for
     * {@code file.delete.delay.ms}, for the readers that found a log before it went, and the renamed
     * directories are removed then (or by the next open).
     *
     * @throws IllegalArgumentException when one of the partitions does not exist (nothing is deleted)
     */
    public void deleteLogs(final String topic, final int from, final int to) throws IOException
    {
        moveLogs(topic, from, to, LogDeletion.DELETE_SUFFIX);
    }

    /** Kafka 4.4's stray logs: {@link #deleteLogs}, but renamed {@code <topic>-<partition>.<uuid>-stray}, kept, never loaded. */
    public void strayLogs(final String topic, final int from, final int to) throws IOException
    {
        moveLogs(topic, from, to, LogDeletion.STRAY_SUFFIX);
    }

    private synchronized void moveLogs(final String topic, final int from, final int to, final String kind) throws IOException
    {
        requireOpen();
        final PartitionLog[] doomed = new PartitionLog[Math.max(0, to - from)];
        Arrays.setAll(doomed, i -> requireLog(topic, from + i));
        LogDeletion.move(doomed, kind, cleaner, this::unpublish, this::checkpointDir, background);
    }

    /** Removes deleted logs (null entries skipped) from the name map and the log array, in one rebuild. */
    private void unpublish(final PartitionLog[] gone)
    {
        synchronized (checkpointLock) // a checkpoint in progress has written the old logs' entries by now
        {
            for (final PartitionLog log : gone)
            {
                if (log != null)
                {
                    logs.remove(OffsetCheckpoint.key(log.topic(), log.partition()), log);
                }
            }
            logArray = logs.values().toArray(new PartitionLog[0]); // once per batch: per partition it was O(N^2)
        }
    }

    private PartitionLog requireLog(final String topic, final int partition)
    {
        final PartitionLog log = log(topic, partition);
        if (log == null)
        {
            throw LogMessages.noPartition(topic, partition);
        }
        return log;
    }

    private Iterable<PartitionLog> logsIn(final Path dir)
    {
        final List<PartitionLog> in = new ArrayList<>();
        for (final PartitionLog log : logs.values())
        {
            if (log.dir().getParent().equals(dir))
            {
                in.add(log);
            }
        }
        return in;
    }

    // ---- background work ----

    /**
     * Runs retention on every log now (also run every log.retention.check.interval.ms); on the compacted
     * ones only when no cleaner thread runs, as their retention is the cleaner threads' then (Kafka's).
     */
    public void runRetention()
    {
        LogRetention.runAll(logs.values(), config.clock().time(), cleaner.runs(), cleaner.manager());
    }

    /** Writes the recovery-point and log-start-offset checkpoints of every directory. */
    public void checkpoint() throws IOException
    {
        for (final Path dir : committers.keySet())
        {
            checkpointDir(dir);
        }
    }

    /**
     * One directory's checkpoints, from the logs published in it now. Under {@link #checkpointLock}:
     * a deletion unpublishes its logs under it too, so an entry of a deleted log is never written
     * after the deletion wrote the checkpoints without it (a new log of the same name would take it).
     */
    private void checkpointDir(final Path dir) throws IOException
    {
        synchronized (checkpointLock)
        {
            OffsetCheckpoint.writeBoth(dir, logsIn(dir));
            cleaner.manager().forgetGone(dir); // a deleted log's cleaner-offset-checkpoint entry
        }
    }

    private void requireOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("log manager is closed");
        }
    }

    /** Clean shutdown: flushes and closes every log, writes checkpoints and the clean-shutdown markers. */
    @Override
    public synchronized void close() throws IOException
    {
        if (closed)
        {
            return;
        }
        closed = true;
        creationFsyncs.close();
        cleaner.stop(); // before the logs close, as Kafka's LogManager.shutdown
        background.stopTasks();
        committerRunners.forEach(LogAgents::stop);
        background.stopThreads();
        IOException failure = null;
        for (final PartitionLog log : logs.values())
        {
            try
            {
                log.close();
            }
            catch (final IOException ex)
            {
                LOG.error("closing {} failed", log, ex);
                failure = ex;
            }
        }
        if (failure == null)
        {
            checkpoint();
            for (final Path dir : committers.keySet())
            {
                Files.createFile(dir.resolve(CLEAN_SHUTDOWN_FILE));
                DurableFile.fsyncDirectory(dir);
            }
        }
        releaseLocks();
        if (failure != null)
        {
            throw failure;
        }
    }

    private void closeQuietly()
    {
        closed = true;
        cleaner.stop();
        background.stopTasks();
        committerRunners.forEach(LogAgents::stop);
        background.stopThreads();
        for (final PartitionLog log : logs.values())
        {
            try
            {
                log.close();
            }
            catch (final IOException | RuntimeException ignored)
            {
                // already failing
            }
        }
        releaseLocks();
    }

    private void releaseLocks()
    {
        for (final Path dir : lockChannels.keySet())
        {
            try
            {
                locks.get(dir).release();
                lockChannels.get(dir).close();
            }
            catch (final IOException ignored)
            {
                // the process is ending its use of the directory either way
            }
        }
    }
}
