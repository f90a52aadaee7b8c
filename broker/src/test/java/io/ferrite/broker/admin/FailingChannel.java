package io.ferrite.broker.admin;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * A real file channel whose fsyncs fail while {@link #failForce} is set: a disk that refuses a flush (what an
 * fsync's EIO is to the journal), injected where no test can make the kernel fail one on demand.
 */
final class FailingChannel extends FileChannel
{
    static volatile boolean failForce;
    /** A file name whose channels' close fails (after the file is really closed: an EIO from close(2)), or null. */
    static volatile String failCloseOf;

    private final FileChannel real;
    private final Path file;

    private FailingChannel(final FileChannel real, final Path file)
    {
        this.real = real;
        this.file = file;
    }

    static FileChannel opening(final Path file, final OpenOption... options) throws IOException
    {
        return new FailingChannel(FileChannel.open(file, options), file);
    }

    @Override
    public void force(final boolean metaData) throws IOException
    {
        if (failForce)
        {
            throw new IOException("injected: fsync failed");
        }
        real.force(metaData);
    }

    @Override
    public int read(final ByteBuffer dst) throws IOException
    {
        return real.read(dst);
    }

    @Override
    public long read(final ByteBuffer[] dsts, final int offset, final int length) throws IOException
    {
        return real.read(dsts, offset, length);
    }

    @Override
    public int write(final ByteBuffer src) throws IOException
    {
        return real.write(src);
    }

    @Override
    public long write(final ByteBuffer[] srcs, final int offset, final int length) throws IOException
    {
        return real.write(srcs, offset, length);
    }

    @Override
    public long position() throws IOException
    {
        return real.position();
    }

    @Override
    public FileChannel position(final long newPosition) throws IOException
    {
        real.position(newPosition);
        return this;
    }

    @Override
    public long size() throws IOException
    {
        return real.size();
    }

    @Override
    public FileChannel truncate(final long size) throws IOException
    {
        real.truncate(size);
        return this;
    }

    @Override
    public long transferTo(final long position, final long count, final WritableByteChannel target) throws IOException
    {
        return real.transferTo(position, count, target);
    }

    @Override
    public long transferFrom(final ReadableByteChannel src, final long position, final long count) throws IOException
    {
        return real.transferFrom(src, position, count);
    }

    @Override
    public int read(final ByteBuffer dst, final long position) throws IOException
    {
        return real.read(dst, position);
    }

    @Override
    public int write(final ByteBuffer src, final long position) throws IOException
    {
        return real.write(src, position);
    }

    @Override
    public MappedByteBuffer map(final MapMode mode, final long position, final long size) throws IOException
    {
        return real.map(mode, position, size);
    }

    @Override
    public FileLock lock(final long position, final long size, final boolean shared) throws IOException
    {
        return real.lock(position, size, shared);
    }

    @Override
    public FileLock tryLock(final long position, final long size, final boolean shared) throws IOException
    {
        return real.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException
    {
        real.close();
        if (file.getFileName().toString().equals(failCloseOf))
        {
            throw new IOException("injected: close failed");
        }
    }
}
