package io.ferrite.broker.scram;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * One user's credential for one SCRAM mechanism, as Kafka 4.4 stores it (its {@code UserScramCredentialRecord}): the
 * salt, StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key") and the
 * iteration count. Neither the password nor the salted password is kept: the two keys let the broker check a client's
 * proof and sign its answer, not log in as the user. {@link #toString} shows the iterations only.
 */
public record ScramCredential(byte[] salt, byte[] storedKey, byte[] serverKey, int iterations)
{
    private static final byte[] CLIENT_KEY = "Client Key".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_KEY = "Server Key".getBytes(StandardCharsets.US_ASCII);

    /**
     * The credential of a salted password (what AlterUserScramCredentials carries; the client ran Hi, PBKDF2, itself).
     *
     * @throws IllegalArgumentException for an empty salted password (the JDK refuses an empty HMAC key; Kafka's
     *                                  controller answers it UNKNOWN_SERVER_ERROR)
     */
    public static ScramCredential of(final ScramMechanism mechanism, final byte[] salt, final byte[] saltedPassword, final int iterations)
    {
        final byte[] clientKey = hmac(mechanism, saltedPassword, CLIENT_KEY);
        try
        {
            return new ScramCredential(salt.clone(), hash(mechanism, clientKey), hmac(mechanism, saltedPassword, SERVER_KEY), iterations);
        }
        finally
        {
            Arrays.fill(clientKey, (byte)0);
        }
    }

    /** HMAC of {@code data} under {@code key} with the mechanism's hash. */
    static byte[] hmac(final ScramMechanism mechanism, final byte[] key, final byte[] data)
    {
        try
        {
            final Mac mac = Mac.getInstance(mechanism.macAlgorithm());
            mac.init(new SecretKeySpec(key, mechanism.macAlgorithm()));
            return mac.doFinal(data);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException(mechanism.macAlgorithm() + " is not available", ex); // every JDK 17 has both
        }
    }

    static byte[] hash(final ScramMechanism mechanism, final byte[] data)
    {
        try
        {
            return MessageDigest.getInstance(mechanism.hashAlgorithm()).digest(data);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException(mechanism.hashAlgorithm() + " is not available", ex);
        }
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof ScramCredential c && iterations == c.iterations && Arrays.equals(salt, c.salt)
            && MessageDigest.isEqual(storedKey, c.storedKey) && MessageDigest.isEqual(serverKey, c.serverKey);
    }

    @Override
    public int hashCode()
    {
        return Arrays.hashCode(salt) * 31 + iterations;
    }

    /** The iterations only: never a key. */
    @Override
    public String toString()
    {
        return "ScramCredential(iterations=" + iterations + ")";
    }
}
