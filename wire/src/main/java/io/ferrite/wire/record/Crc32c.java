package io.ferrite.wire.record;

import io.ferrite.wire.BufferView;
import org.agrona.DirectBuffer;

import java.util.zip.CRC32C;

/**
 * CRC32C (Castagnoli) over a region of an Agrona buffer, through the JDK's intrinsic
 * {@link CRC32C}: no {@code --add-opens}, no allocation after the first use of a buffer. One
 * instance per thread.
 */
public final class Crc32c
{
    private final CRC32C crc = new CRC32C();
    private final BufferView view = new BufferView();
    private byte[] chunk;

    public int compute(final DirectBuffer buffer, final int offset, final int length)
    {
        crc.reset();
        final byte[] array = buffer.byteArray();
        if (array != null)
        {
            crc.update(array, buffer.wrapAdjustment() + offset, length);
        }
        else if (buffer.byteBuffer() != null)
        {
            crc.update(view.of(buffer, offset, length));
        }
        else
        {
            // a buffer over a raw address: no ByteBuffer to hand to the intrinsic, so copy through a chunk
            if (chunk == null)
            {
                chunk = new byte[4096];
            }
            for (int done = 0; done < length; )
            {
                final int n = Math.min(chunk.length, length - done);
                buffer.getBytes(offset + done, chunk, 0, n);
                crc.update(chunk, 0, n);
                done += n;
            }
        }
        return (int)crc.getValue();
    }
}
