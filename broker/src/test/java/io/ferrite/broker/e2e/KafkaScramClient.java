package io.ferrite.broker.e2e;

import org.apache.kafka.common.security.scram.ScramExtensionsCallback;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;

import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.SaslException;

/**
 * kafka-clients 4.4's own SCRAM client ({@code ScramSaslClient}, what a producer runs), its messages carried by the test
 * over a raw connection: the client-first message, the client-final one for the server-first, and the check of the
 * server's signature in the server-final one (it throws when the broker did not prove it holds the user's ServerKey).
 */
final class KafkaScramClient
{
    private final ScramSaslClient client;

    KafkaScramClient(final String mechanism, final String user, final String password)
    {
        try
        {
            client = new ScramSaslClient(ScramMechanism.forMechanismName(mechanism), callbacks ->
            {
                for (final javax.security.auth.callback.Callback c : callbacks)
                {
                    if (c instanceof NameCallback name)
                    {
                        name.setName(user);
                    }
                    else if (c instanceof PasswordCallback secret)
                    {
                        secret.setPassword(password.toCharArray());
                    }
                    else if (!(c instanceof ScramExtensionsCallback))
                    {
                        throw new UnsupportedCallbackException(c);
                    }
                }
            });
        }
        catch (final java.security.NoSuchAlgorithmException ex)
        {
            throw new AssertionError(ex);
        }
    }

    /** The client's next message for the server's {@code challenge} (an empty one first). */
    byte[] next(final byte[] challenge) throws SaslException
    {
        return client.evaluateChallenge(challenge);
    }

    boolean complete()
    {
        return client.isComplete();
    }
}
