package io.ferrite.broker.scram;

/**
 * The SCRAM mechanisms Kafka 4.4 serves (RFC 5802 with SHA-256 and SHA-512, RFC 7677): their SASL names, the type
 * byte of AlterUserScramCredentials and DescribeUserScramCredentials (kafka-clients' {@code admin.ScramMechanism}:
 * 0 is UNKNOWN), their hash and HMAC, and the iteration bounds of Kafka's {@code internals.ScramMechanism} (4096 to
 * 16384 for both: a credential outside them is UNACCEPTABLE_CREDENTIAL).
 */
public enum ScramMechanism
{
    SCRAM_SHA_256("SCRAM-SHA-256", (byte)1, "SHA-256", "HmacSHA256"),
    SCRAM_SHA_512("SCRAM-SHA-512", (byte)2, "SHA-512", "HmacSHA512");

    /** Kafka's {@code minIterations}, the same for both mechanisms. */
    public static final int MIN_ITERATIONS = 4096;
    /** Kafka's {@code maxIterations}, the same for both mechanisms. */
    public static final int MAX_ITERATIONS = 16384;

    private final String mechanismName;
    private final byte type;
    private final String hashAlgorithm;
    private final String macAlgorithm;

    ScramMechanism(final String mechanismName, final byte type, final String hashAlgorithm, final String macAlgorithm)
    {
        this.mechanismName = mechanismName;
        this.type = type;
        this.hashAlgorithm = hashAlgorithm;
        this.macAlgorithm = macAlgorithm;
    }

    /** The SASL name: {@code SCRAM-SHA-256}. */
    public String mechanismName()
    {
        return mechanismName;
    }

    /** The type byte of the credential APIs. */
    public byte type()
    {
        return type;
    }

    String hashAlgorithm()
    {
        return hashAlgorithm;
    }

    String macAlgorithm()
    {
        return macAlgorithm;
    }

    /** The mechanism of a type byte, or null: Kafka's UNKNOWN. */
    public static ScramMechanism forType(final byte type)
    {
        for (final ScramMechanism m : values())
        {
            if (m.type == type)
            {
                return m;
            }
        }
        return null;
    }

    /** The mechanism of a SASL name, or null: not a SCRAM mechanism. */
    public static ScramMechanism forName(final String name)
    {
        for (final ScramMechanism m : values())
        {
            if (m.mechanismName.equals(name))
            {
                return m;
            }
        }
        return null;
    }
}
