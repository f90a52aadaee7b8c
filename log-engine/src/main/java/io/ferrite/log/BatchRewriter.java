package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

/**
 * What replaces each batch of a run of segments a {@link SegmentReplacer} replaces: a log cleaner's
 * filter. Called on the replacing thread, once per batch, in offset order.
 */
@FunctionalInterface
public interface BatchRewriter
{
    /**
     * @param batch a batch of the run, in place in its segment's mapping (read-only, valid during the
     *     call only; its CRC checked)
     * @return what to write in its place: {@code batch} itself to keep it, a batch of the caller's own
     *     (whole, v2, its offsets within {@code batch}'s, e.g. the records kept, rebuilt) or null to drop it
     */
    RecordBatch rewrite(RecordBatch batch);
}
