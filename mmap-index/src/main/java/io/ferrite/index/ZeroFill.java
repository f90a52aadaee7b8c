package io.ferrite.index;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Writes zeros into a file to claim its disk blocks ({@code write()} fails with an IOException on a
 * full disk, where a store into an unallocated page of a mapping is a SIGBUS). One block of zeros
 * serves every file and thread: with a buffer per file, 10 000 active partitions held 64 KiB of
 * direct memory each for their log and again for each index.
 */
public final class ZeroFill
{
    /** Bytes written per system call at most. */
    public static final int BLOCK = 64 * 1024;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(BLOCK).asReadOnlyBuffer();
    /** Each thread's own position and limit over the shared zeros (a view, made once per thread). */
    private static final ThreadLocal<ByteBuffer> VIEW = ThreadLocal.withInitial(ZEROS::duplicate);

    private ZeroFill()
    {
    }

    /**
     * Writes up to {@code length} zeros (at most {@link #BLOCK}) at {@code position}.
     *
     * @return the bytes written, as {@link FileChannel#write(ByteBuffer, long)} returns them
     */
    public static int write(final FileChannel channel, final long position, final long length) throws IOException
    {
        final ByteBuffer zeros = VIEW.get();
        zeros.clear().limit((int)Math.min(BLOCK, length));
        return channel.write(zeros, position);
    }
}
