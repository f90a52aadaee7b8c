package io.ferrite.broker;

/**
 * The broker's diagnostics switches: JVM system properties read once, as this class loads, into
 * {@code static final} flags (so the JIT folds the code behind a switch that is off). Not broker
 * settings: they are given to the broker's JVM ({@code java -D...}), not in its configuration
 * (docs/configuration.md, "Diagnostics").
 */
public final class Diagnostics
{
    /** The property that turns on the transaction coordinator's EndTxn timing ({@code txn.EndTxnTiming}). */
    public static final String END_TXN_TIMING_PROPERTY = "ferrite.txn.endTxnTiming";
    /** {@link #END_TXN_TIMING_PROPERTY} as the JVM started. */
    public static final boolean END_TXN_TIMING = Boolean.getBoolean(END_TXN_TIMING_PROPERTY);
    /**
     * The property that turns on the log cleaner's stage timing ({@code io.ferrite.log.CleanerTiming}, which reads it: the
     * log engine does not see this class).
     */
    public static final String CLEANER_STAGE_TIMING_PROPERTY = io.ferrite.log.CleanerTiming.PROPERTY;

    private Diagnostics()
    {
    }
}
