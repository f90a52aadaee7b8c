package io.ferrite.log.clean;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.security.MessageDigestSpi;
import java.security.Provider;
import java.security.Security;

/**
 * {@link KeyHash} as a {@code MessageDigest} named {@value #ALGORITHM}, for tests only: Kafka's
 * {@code SkimpyOffsetMap(memory, hashAlgorithm)} takes its hash by name from {@code MessageDigest.getInstance}, so
 * given this one it fills its block with the hashes {@link OffsetMap} writes, and the two blocks can be compared byte
 * for byte (slot layout, probe sequence, clear). The digest is the hash's high then low half, big-endian: the 16
 * bytes {@link OffsetMap} writes in a slot.
 */
final class KeyHashDigest extends MessageDigestSpi
{
    static final String ALGORITHM = "FERRITE-KEYHASH-TEST";

    private static final String PROVIDER = "FerriteTestKeyHash";

    private final ByteArrayOutputStream key = new ByteArrayOutputStream();
    private final KeyHash hash = new KeyHash();

    /** Makes {@value #ALGORITHM} known to {@code MessageDigest.getInstance} in this JVM (once; later calls do nothing). */
    static synchronized void register()
    {
        if (Security.getProvider(PROVIDER) == null)
        {
            Security.addProvider(new KeyHashProvider());
        }
    }

    @Override
    protected int engineGetDigestLength()
    {
        return 16;
    }

    @Override
    protected void engineUpdate(final byte input)
    {
        key.write(input);
    }

    @Override
    protected void engineUpdate(final byte[] input, final int offset, final int length)
    {
        key.write(input, offset, length);
    }

    @Override
    protected byte[] engineDigest()
    {
        final byte[] bytes = key.toByteArray();
        key.reset();
        hash.hash(new UnsafeBuffer(bytes), 0, bytes.length);
        return ByteBuffer.allocate(16).putLong(hash.high()).putLong(hash.low()).array();
    }

    @Override
    protected void engineReset()
    {
        key.reset();
    }

    /** Hands out a new digest per {@code getInstance}, with no class lookup by name. */
    private static final class KeyHashProvider extends Provider
    {
        private static final long serialVersionUID = 1L;

        KeyHashProvider()
        {
            super(PROVIDER, "1", "KeyHash as a MessageDigest, for tests");
            putService(new Service(this, "MessageDigest", ALGORITHM, KeyHashDigest.class.getName(), null, null)
            {
                @Override
                public Object newInstance(final Object constructorParameter)
                {
                    return new KeyHashDigest();
                }
            });
        }
    }
}
