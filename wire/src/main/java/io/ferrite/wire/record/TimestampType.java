package io.ferrite.wire.record;

/** Bit 3 of the batch attributes. */
public enum TimestampType
{
    CREATE_TIME,
    LOG_APPEND_TIME
}
