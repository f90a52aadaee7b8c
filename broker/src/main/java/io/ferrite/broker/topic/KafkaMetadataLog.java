package io.ferrite.broker.topic;

import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reads a Kafka 4.4 KRaft metadata log directory ({@code __cluster_metadata-0}) into a {@link KafkaMetadataImage}, as
 * Kafka's broker does at its start: the latest snapshot ({@code <end offset, 20 digits>-<epoch, 10 digits>.checkpoint},
 * record batches whose records are the whole image up to the end offset, between a header and a footer in control
 * batches), then the log's records from the snapshot's end offset on ({@code <base offset>.log} segments). Control
 * batches (leader changes, voters, snapshot header and footer) are skipped; the records of a metadata transaction apply
 * at its End only (none at an Abort, none of one left open). Read-only: the directory is Kafka's and is
 * left as it is.
 *
 * <p>Whole or said not to be: a batch that fails its checks ends the reading (what follows would apply on top of records
 * missed), and so does a gap (no snapshot and a log not starting at offset 0, or a segment starting past the offset
 * expected); an empty directory is not a history either. These are {@link #incomplete()}; a record that cannot be parsed
 * is logged, skipped and counted ({@link KafkaMetadataImage#unreadable}). {@link KafkaImport} takes over nothing from an
 * image not read whole.
 */
final class KafkaMetadataLog
{
    static final String DIR = "__cluster_metadata-0";
    private static final Logger LOG = LoggerFactory.getLogger(KafkaMetadataLog.class);
    private static final String SNAPSHOT_SUFFIX = ".checkpoint";
    private static final String SEGMENT_SUFFIX = ".log";
    /** Kafka 4.4's BeginTransactionRecord, EndTransactionRecord, AbortTransactionRecord (KIP-868). */
    private static final int BEGIN_TRANSACTION = 23;
    private static final int END_TRANSACTION = 24;
    private static final int ABORT_TRANSACTION = 25;

    private final KafkaMetadataImage image = new KafkaMetadataImage();
    private final RecordBatch batch = new RecordBatch();
    private final RecordReader records = new RecordReader();
    /** Where the records read so far came from, for the log lines. */
    private final List<String> read = new ArrayList<>();
    /** The offset the next log record must have: the latest snapshot's end, then one past each batch applied. */
    private long next;
    private String incomplete;
    /** The records of the metadata transaction open, or null. */
    private List<ByteBuffer> transaction;

    private KafkaMetadataLog()
    {
    }

    /** The image of the metadata log in {@code dir}. */
    static KafkaMetadataLog read(final Path dir) throws IOException
    {
        final KafkaMetadataLog log = new KafkaMetadataLog();
        final List<Path> snapshots = files(dir, SNAPSHOT_SUFFIX);
        if (!snapshots.isEmpty())
        {
            final Path latest = snapshots.get(snapshots.size() - 1);
            final long end = Long.parseLong(latest.getFileName().toString().substring(0, 20));
            log.file(latest, true);
            log.next = end;
        }
        for (final Path segment : files(dir, SEGMENT_SUFFIX))
        {
            if (log.incomplete != null)
            {
                break; // a damaged batch or a gap: what follows would apply on top of records missed
            }
            log.file(segment, false);
        }
        if (log.incomplete == null && snapshots.isEmpty() && log.next == 0)
        {
            log.incomplete = "no snapshot and no record (an empty " + DIR + ")";
        }
        return log;
    }

    /** Why the records read are not Kafka's whole history (an empty log, a gap, a damaged batch), or null. */
    String incomplete()
    {
        return incomplete;
    }

    KafkaMetadataImage image()
    {
        return image;
    }

    /** The files read, with the records taken from each. */
    List<String> sources()
    {
        return read;
    }

    /** Applies the records of one file: a snapshot's all, a segment's from {@link #next} on, without a gap. */
    private void file(final Path file, final boolean snapshot) throws IOException
    {
        final long size = Files.size(file);
        if (size > Integer.MAX_VALUE)
        {
            throw new IOException(file + ": " + size + " bytes, more than a metadata segment can hold");
        }
        final ByteBuffer bytes = ByteBuffer.allocateDirect((int)size);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            while (bytes.hasRemaining() && channel.read(bytes) >= 0)
            {
                // read it whole: the file is small (a metadata log of a single node is kilobytes to megabytes)
            }
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes, 0, bytes.position());
        int position = 0;
        int applied = 0;
        while (position < buffer.capacity())
        {
            batch.wrap(buffer, position);
            final int check = batch.check(buffer.capacity() - position);
            if (check != RecordBatch.OK)
            {
                LOG.warn("Kafka metadata {}: the batch at byte {} fails its checks (code {}): the rest of the file is not read",
                    file, position, check);
                image.unreadable++;
                incomplete = file.getFileName() + ": a damaged batch at byte " + position;
                break;
            }
            if (!snapshot && batch.baseOffset() > next)
            {
                incomplete = file.getFileName() + ": offsets " + next + " to " + (batch.baseOffset() - 1) + " are missing "
                    + (next == 0 ? "(no snapshot, and the log does not start at 0)" : "(between the snapshot or segment before and this one)");
                break;
            }
            if (snapshot || batch.lastOffset() >= next)
            {
                if (!batch.isControl())
                {
                    applied += apply(file, snapshot ? Long.MIN_VALUE : next);
                }
                next = snapshot ? next : batch.lastOffset() + 1;
            }
            position += batch.sizeInBytes();
        }
        read.add(file.getFileName() + " (" + applied + " records)");
    }

    private int apply(final Path file, final long from)
    {
        int applied = 0;
        try
        {
            records.reset(batch);
            while (records.hasNext())
            {
                final Record record = records.next();
                if (record.offset() < from || !record.hasValue())
                {
                    continue;
                }
                final ByteBuffer value = ByteBuffer.allocate(record.valueLength());
                record.buffer().getBytes(record.valueOffset(), value, 0, record.valueLength());
                try
                {
                    applied += transaction(value);
                }
                catch (final IllegalArgumentException ex)
                {
                    image.unreadable++;
                    LOG.warn("Kafka metadata {}: the record at offset {} cannot be read ({}): skipped", file, record.offset(),
                        ex.getMessage());
                }
            }
        }
        catch (final RuntimeException ex)
        {
            image.unreadable++;
            LOG.warn("Kafka metadata {}: the batch at offset {} cannot be read ({}): skipped", file, batch.baseOffset(), ex.toString());
        }
        return applied;
    }

    /**
     * Applies a record, or keeps it while a metadata transaction is open: its records apply at its End, none at its
     * Abort, and none of one still open at the end of the log, as Kafka's loader publishes only committed ones.
     */
    private int transaction(final ByteBuffer value)
    {
        // the frame version (1) and the api key are one byte each for every record type of Kafka 4.4
        final int apiKey = value.remaining() > 1 && value.get(0) == 1 ? value.get(1) : -1;
        if (apiKey == BEGIN_TRANSACTION || apiKey == END_TRANSACTION || apiKey == ABORT_TRANSACTION)
        {
            image.apply(value); // counted among the types not read
            final List<ByteBuffer> records = transaction;
            transaction = apiKey == BEGIN_TRANSACTION ? new ArrayList<>() : null;
            if (apiKey == END_TRANSACTION && records != null)
            {
                records.forEach(image::apply);
                return records.size() + 1;
            }
            return 1;
        }
        if (transaction != null)
        {
            transaction.add(value);
            return 0;
        }
        image.apply(value);
        return 1;
    }

    /** The files of {@code dir} ending in {@code suffix}, by name (Kafka's zero-padded names sort by offset). */
    private static List<Path> files(final Path dir, final String suffix) throws IOException
    {
        try (Stream<Path> list = Files.list(dir))
        {
            return list.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }
}
