package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;

/**
 * What one latency cell of {@link ClientLatency} measured: each measured record's send-to-ack latency, and its
 * send-to-poll latency when a consumer took part (else null), in microseconds from the record's intended send time;
 * the records that failed (a send refused, an error acknowledged, or not acknowledged or polled by the deadline) with
 * the first failure.
 */
record CellResult(Histogram ack, Histogram endToEnd, long failed, String firstFailure)
{
}
