package io.ferrite.wire.compress;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * One compression codec in the framing Kafka uses for it. Instances keep their native contexts and
 * scratch buffers between calls (nothing is allocated once they are warm) and are not thread-safe.
 */
public interface Codec
{
    CompressionType type();

    /**
     * Compresses {@code [offset, offset + length)} of {@code src} to {@code dst} at {@code dstOffset}
     * ({@code dst} must be expandable or large enough).
     *
     * @return the compressed length
     */
    int compress(DirectBuffer src, int offset, int length, MutableDirectBuffer dst, int dstOffset);

    /**
     * Decompresses {@code [offset, offset + length)} of {@code src} into {@code dst} from
     * {@code dstOffset}, growing it as needed but never beyond {@code maxLength} decompressed bytes.
     *
     * @return the decompressed length
     * @throws io.ferrite.wire.record.CorruptRecordException when the input is not valid for the codec,
     *                                                       or decompresses to more than {@code maxLength}
     */
    int decompress(DirectBuffer src, int offset, int length, ExpandableDirectByteBuffer dst, int dstOffset, int maxLength);
}
