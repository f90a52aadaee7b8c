package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeLogDirsRequestDecoder;
import io.ferrite.wire.message.DescribeLogDirsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.IntHashSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * DescribeLogDirs (kafka-log-dirs.sh, {@code Admin.describeLogDirs}), as Kafka 4.4 answers it: one
 * result per directory of {@code log.dirs} (its absolute path as configured), with the partitions
 * the request asks for that live there — every partition when the topics are null, else the named
 * ones that exist (an unknown topic or partition is left out, and so is a topic none of whose asked
 * partitions is in that directory: checked against Kafka 4.4). Internal topics are partitions like
 * any other. A partition's size is the bytes of its segments' batches ({@code PartitionLog.sizeInBytes}:
 * one acquire load per segment from the copy-on-write segment array, no lock, so reading it here on
 * the network thread takes nothing from the partition's writer); the offset lag is 0 (this node is the
 * only replica, and no future logs exist: no AlterReplicaLogDirs); v4+ carries the directory's file
 * store's total and usable bytes (Long.MAX_VALUE for a store too large for a long, as Kafka), v5 a
 * directory never cordoned.
 *
 * <p>Ferrite has no offline log directories (a directory that fails at start stops the start), so the
 * only directory error is a file store that cannot be read now: KAFKA_STORAGE_ERROR and no topics, as
 * Kafka answers for an offline directory. Authorization (Kafka's CLUSTER_AUTHORIZATION_FAILED for a
 * principal without DESCRIBE on the cluster) waits for Ferrite's authorizer: the top-level error is NONE.
 * An admin request: it allocates (the asked partitions, the file store), never on produce or fetch.
 */
public final class DescribeLogDirsHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(DescribeLogDirsHandler.class);

    private final TopicRegistry topics;
    /** As answered: each distinct configured directory's absolute path, as Kafka writes it. */
    private final String[] dirNames;
    /** As the logs know their directory (LogManager opens it absolute and normalized). */
    private final Path[] dirs;
    private final DescribeLogDirsRequestDecoder request = new DescribeLogDirsRequestDecoder();
    private final DescribeLogDirsResponseEncoder response = new DescribeLogDirsResponseEncoder();

    public DescribeLogDirsHandler(final TopicRegistry topics, final List<Path> logDirs)
    {
        this.topics = topics;
        final Set<String> names = new LinkedHashSet<>();
        for (final Path dir : logDirs)
        {
            names.add(dir.toAbsolutePath().toString());
        }
        this.dirNames = names.toArray(new String[0]);
        this.dirs = new Path[dirNames.length];
        for (int i = 0; i < dirs.length; i++)
        {
            dirs[i] = Path.of(dirNames[i]).normalize();
        }
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        if (!Access.cluster(connection, AclCodes.DESCRIBE))
        {
            // Kafka 4.4: no results, and from v3 the top-level error (v0-2 have none: an empty answer)
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).results(0);
            return outOffset + response.finish();
        }
        final Map<String, IntHashSet> asked = asked(request.topics());
        final Collection<Topic> all = topics.topics();
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.NONE);
        final DescribeLogDirsResponseEncoder.DescribeLogDirsResult result = response.results(dirs.length);
        for (int d = 0; d < dirs.length; d++)
        {
            result.next();
            final FileStore store = fileStore(dirs[d]);
            if (store == null)
            {
                result.errorCode(Errors.KAFKA_STORAGE_ERROR).logDir(dirNames[d]).topics(0);
                continue;
            }
            final List<Topic> here = new ArrayList<>();
            for (final Topic topic : all)
            {
                if (!topic.isDeleted() && partitionsIn(topic, dirs[d], asked) > 0)
                {
                    here.add(topic);
                }
            }
            result.errorCode(Errors.NONE).logDir(dirNames[d]);
            final DescribeLogDirsResponseEncoder.DescribeLogDirsTopic rt = result.topics(here.size());
            for (final Topic topic : here)
            {
                rt.next().name(topic.name);
                final DescribeLogDirsResponseEncoder.DescribeLogDirsPartition rp = rt.partitions(partitionsIn(topic, dirs[d], asked));
                for (final Partition p : topic.partitions)
                {
                    if (isIn(p, dirs[d], asked))
                    {
                        rp.next().partitionIndex(p.index).partitionSize(p.log.sizeInBytes()).offsetLag(0).isFutureKey(false);
                    }
                }
            }
            result.totalBytes(bytes(store, true)).usableBytes(bytes(store, false)).isCordoned(false);
        }
        return outOffset + response.finish();
    }

    /** The partitions asked for by topic name, or null for every partition (null topics). */
    private static Map<String, IntHashSet> asked(final DescribeLogDirsRequestDecoder.DescribableLogDirTopic t)
    {
        if (t.isNullArray())
        {
            return null;
        }
        final Map<String, IntHashSet> asked = new HashMap<>();
        while (t.hasNext())
        {
            t.next();
            final IntHashSet indexes = asked.computeIfAbsent(t.topic(), name -> new IntHashSet());
            for (int i = 0; i < t.partitionsCount(); i++)
            {
                indexes.add(t.partitions(i));
            }
        }
        return asked;
    }

    private static int partitionsIn(final Topic topic, final Path dir, final Map<String, IntHashSet> asked)
    {
        int n = 0;
        for (final Partition p : topic.partitions)
        {
            if (isIn(p, dir, asked))
            {
                n++;
            }
        }
        return n;
    }

    /** A partition in {@code dir} and asked for. */
    private static boolean isIn(final Partition p, final Path dir, final Map<String, IntHashSet> asked)
    {
        if (asked != null)
        {
            final IntHashSet indexes = asked.get(p.topic);
            if (indexes == null || !indexes.contains(p.index))
            {
                return false;
            }
        }
        return p.log.dir().getParent().equals(dir);
    }

    private static FileStore fileStore(final Path dir)
    {
        try
        {
            return Files.getFileStore(dir);
        }
        catch (final IOException ex)
        {
            LOG.warn("cannot read the file store of log directory {}", dir, ex);
            return null;
        }
    }

    /** Kafka's answer for a store whose size overflows a long (a negative figure): Long.MAX_VALUE. */
    private static long bytes(final FileStore store, final boolean total)
    {
        try
        {
            final long bytes = total ? store.getTotalSpace() : store.getUsableSpace();
            return bytes < 0 ? Long.MAX_VALUE : bytes;
        }
        catch (final IOException ex)
        {
            LOG.warn("cannot read the size of file store {}", store, ex);
            return -1;
        }
    }
}
