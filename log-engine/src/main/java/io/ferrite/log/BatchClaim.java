package io.ferrite.log;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Room for one record batch, claimed at the end of a {@link PartitionLog} by its writer, built in
 * place and then committed or aborted: the in-process append, without the copy and the second pass
 * over the bytes that {@link PartitionLog#append} makes.
 *
 * <p>A committed batch ({@link PartitionLog#commit}) is trusted as this process's own work: its frame, record count,
 * offsets delta, producer state and timestamps are checked as {@link PartitionLog#append} checks them, but its CRC is
 * not recomputed and its records are not walked when the header shows them within the timestamp window (with the
 * default {@code message.timestamp.before.max.ms}: the batch's max timestamp against the latest clock reading, the
 * clock being read again only when that does not prove it; otherwise, and for the error's record index, every record
 * against a fresh reading). The latest reading stands in for the clock because a wall clock moves forward: one stepped
 * back lets timestamps up to the step further ahead through until it catches up. A batch from elsewhere (a network, a
 * file) goes through {@link PartitionLog#append}.
 *
 * <pre>{@code
 * if (log.claim(maxLength, claim, result)) {
 *     int length = claim.wrap(builder).appendRecord(...).build();
 *     log.commit(claim, length, result);   // or log.abort(claim)
 * }
 * }</pre>
 *
 * <p>With the mapped write strategy {@link #buffer()} is the active segment's own mapping, from
 * index 0 to {@link #capacity()}; readers see nothing of it until the commit publishes the batch.
 * Otherwise (the channel strategy, or a claim the mapping cannot hold) it is a buffer of the claim's
 * own, copied into the log at the commit. Reusable: one per writer, allocation-free once its
 * fallback buffer has grown (which happens only when it is needed).
 *
 * <p>Between claim and commit the buffer belongs to the writer alone, and nothing else may be
 * appended to the log; after the commit or abort it wraps nothing. The batch carries
 * {@link #UNCOMMITTED} as its base offset until the commit (what {@link #wrap} sets up), so that
 * recovery can never take a batch that was built and not committed, whatever a crash leaves in the
 * file; and nothing may change the batch after {@code build()} computed its CRC (the commit does not
 * compute it again). If the writer cannot finish, {@link PartitionLog#abort} gives the room back;
 * {@link PartitionLog#close} from another thread waits for the claim to end.
 */
public final class BatchClaim
{
    /** The base offset of a claimed batch until its commit writes the real one. */
    public static final long UNCOMMITTED = -1L;

    final UnsafeBuffer buffer = new UnsafeBuffer(0, 0);
    /** The log it is open on, or null. */
    PartitionLog log;
    /** The segment whose mapping holds it (in place), or null (in {@link #scratch}). */
    Segment segment;
    /** Its position in {@link #segment}. */
    int position;
    int capacity;
    private ExpandableDirectByteBuffer scratch;

    /** Where the batch is built: from index 0 to {@link #capacity()}. */
    public MutableDirectBuffer buffer()
    {
        return buffer;
    }

    /**
     * Starts {@code builder} on a batch in the claimed room, with the {@link #UNCOMMITTED} base
     * offset the commit expects.
     */
    public io.ferrite.wire.record.RecordBatchBuilder wrap(final io.ferrite.wire.record.RecordBatchBuilder builder)
    {
        return builder.wrap(buffer, 0).baseOffset(UNCOMMITTED);
    }

    /** The bytes claimed (the most the batch may take). */
    public int capacity()
    {
        return capacity;
    }

    /** Whether the claim is open (claimed, not yet committed or aborted). */
    public boolean isOpen()
    {
        return log != null;
    }

    /** Whether the batch is being built in the segment's mapping (no copy at the commit). */
    public boolean inPlace()
    {
        return segment != null;
    }

    /** The claim's own buffer, at least {@code length} bytes. */
    ExpandableDirectByteBuffer scratch(final int length)
    {
        if (scratch == null)
        {
            scratch = new ExpandableDirectByteBuffer(Math.max(length, 4096));
        }
        scratch.checkLimit(length);
        return scratch;
    }

    void opened(final PartitionLog log, final Segment segment, final int position, final int capacity)
    {
        this.log = log;
        this.segment = segment;
        this.position = position;
        this.capacity = capacity;
    }

    void closed()
    {
        log = null;
        segment = null;
        position = 0;
        capacity = 0;
        buffer.wrap(0, 0);
    }
}
