package io.ferrite.wire.compress;

/** The compression codecs of RecordBatch v2: the low three bits of the batch attributes. */
public enum CompressionType
{
    NONE(0, "none"),
    GZIP(1, "gzip"),
    SNAPPY(2, "snappy"),
    LZ4(3, "lz4"),
    ZSTD(4, "zstd");

    private static final CompressionType[] BY_ID = values();

    /** The id in the batch attributes. */
    public final int id;
    /** The name Kafka's {@code compression.type} uses. */
    public final String title;

    CompressionType(final int id, final String title)
    {
        this.id = id;
        this.title = title;
    }

    /** The type with this id, or null for ids 5 to 7, which Kafka does not define. */
    public static CompressionType forId(final int id)
    {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    public static CompressionType forName(final String name)
    {
        for (final CompressionType t : BY_ID)
        {
            if (t.title.equals(name))
            {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown compression type " + name);
    }
}
