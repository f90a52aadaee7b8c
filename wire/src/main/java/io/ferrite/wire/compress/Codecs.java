package io.ferrite.wire.compress;

/**
 * One instance of each codec, made on first use. Give each thread its own {@code Codecs}: the
 * codecs keep native contexts and scratch buffers and are not thread-safe.
 */
public final class Codecs
{
    private final Codec[] codecs = new Codec[CompressionType.values().length];

    /** The codec for {@code type}; {@link CompressionType#NONE} has none. */
    public Codec codec(final CompressionType type)
    {
        Codec c = codecs[type.id];
        if (c == null)
        {
            switch (type)
            {
                case GZIP: c = new GzipCodec(); break;
                case SNAPPY: c = new SnappyCodec(); break;
                case LZ4: c = new Lz4Codec(); break;
                case ZSTD: c = new ZstdCodec(); break;
                default: throw new IllegalArgumentException("no codec for " + type);
            }
            codecs[type.id] = c;
        }
        return c;
    }
}
