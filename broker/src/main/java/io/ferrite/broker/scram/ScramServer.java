package io.ferrite.broker.scram;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The server side of one SCRAM exchange (RFC 5802, two rounds), as Kafka 4.4's {@code ScramSaslServer} runs it: the
 * client-first message names the user and its nonce; the server answers with the nonce extended by its own (130 random
 * bits in base 36, Kafka's {@code secureRandomString}), the user's salt and iterations; the client-final message must
 * carry that whole nonce and a proof, checked against the StoredKey (H(proof XOR HMAC(StoredKey, AuthMessage)) equals
 * StoredKey, compared in constant time); the server signs its final answer with the ServerKey.
 *
 * <p>Failures are answered as Kafka's {@code SaslServerAuthenticator} answers a {@code SaslException}: one message for
 * all of them — "Authentication failed during authentication due to invalid credentials with SASL mechanism X" — so an
 * unknown user, a wrong password, a wrong nonce and a message that does not parse look the same to the client; an
 * authorization id other than the user is Kafka's own message. As in Kafka, an unknown user fails at the first round
 * (no fake salt is made up). Nothing here is logged; the message never holds a name, a nonce, a key or a proof.
 *
 * <p>One exchange per instance, on its connection's network thread.
 */
public final class ScramServer
{
    private static final SecureRandom RANDOM = new SecureRandom();
    static final String AUTHZID_MISMATCH = "Authentication failed: Client requested an authorization id that is different from username";

    private final ScramMechanism mechanism;
    private final ScramCredentials credentials;
    private final String invalidCredentials;
    private ScramMessages.ClientFirst clientFirst;
    private String serverFirst;
    /** The client's nonce and the server's, as the server-first message gave it. */
    private String nonce;
    private ScramCredential credential;
    private String failure;
    private boolean complete;

    public ScramServer(final ScramMechanism mechanism, final ScramCredentials credentials)
    {
        this(mechanism, credentials, false);
    }

    /** @param reauthentication the connection authenticated before: Kafka's message says "during re-authentication" */
    public ScramServer(final ScramMechanism mechanism, final ScramCredentials credentials, final boolean reauthentication)
    {
        this.mechanism = mechanism;
        this.credentials = credentials;
        this.invalidCredentials = "Authentication failed during " + (reauthentication ? "re-authentication" : "authentication")
            + " due to invalid credentials with SASL mechanism " + mechanism.mechanismName();
    }

    /**
     * The server's answer to the client's next message, or null when the authentication failed ({@link #failure} says
     * what to tell the client). After the second answer the exchange is {@link #complete}.
     */
    public byte[] evaluate(final byte[] response)
    {
        if (failure != null || complete)
        {
            return fail(invalidCredentials); // no third round: the authenticator never asks for one
        }
        return clientFirst == null ? first(response) : last(response);
    }

    private byte[] first(final byte[] response)
    {
        final ScramMessages.ClientFirst message = ScramMessages.clientFirst(response);
        if (message == null || "true".equalsIgnoreCase(message.extensions().get("tokenauth")))
        {
            return fail(invalidCredentials); // not a SCRAM message; or a delegation token, which Ferrite does not issue
        }
        final ScramCredential found = credentials.lookup(mechanism, message.user());
        if (found == null)
        {
            return fail(invalidCredentials);
        }
        if (!message.authorizationId().isEmpty() && !message.authorizationId().equals(message.user()))
        {
            return fail(AUTHZID_MISMATCH);
        }
        clientFirst = message;
        credential = found;
        nonce = message.nonce() + new BigInteger(130, RANDOM).toString(Character.MAX_RADIX);
        serverFirst = ScramMessages.serverFirst(nonce, found.salt(), found.iterations());
        return serverFirst.getBytes(StandardCharsets.UTF_8);
    }

    private byte[] last(final byte[] response)
    {
        final ScramMessages.ClientFinal message = ScramMessages.clientFinal(response);
        if (message == null || !message.nonce().equals(nonce))
        {
            return fail(invalidCredentials); // unparsable, or not the nonce this server gave
        }
        final byte[] authMessage = (clientFirst.bare() + "," + serverFirst + "," + message.withoutProof()).getBytes(StandardCharsets.UTF_8);
        final byte[] clientSignature = ScramCredential.hmac(mechanism, credential.storedKey(), authMessage);
        final byte[] proof = message.proof();
        // a proof of another length than the hash cannot be right (Kafka's xor throws there and drops the connection unanswered)
        if (proof.length != clientSignature.length)
        {
            return fail(invalidCredentials);
        }
        for (int i = 0; i < proof.length; i++)
        {
            proof[i] ^= clientSignature[i]; // the client key, if the proof is right
        }
        final byte[] storedKey = ScramCredential.hash(mechanism, proof);
        Arrays.fill(proof, (byte)0);
        if (!MessageDigest.isEqual(storedKey, credential.storedKey()))
        {
            return fail(invalidCredentials);
        }
        complete = true;
        final byte[] serverSignature = ScramCredential.hmac(mechanism, credential.serverKey(), authMessage);
        credential = null;
        return ScramMessages.serverFinal(serverSignature).getBytes(StandardCharsets.UTF_8);
    }

    private byte[] fail(final String message)
    {
        failure = message;
        credential = null;
        return null;
    }

    /** Whether the client proved it holds the user's password. */
    public boolean complete()
    {
        return complete;
    }

    /** The authenticated user (once {@link #complete}). */
    public String user()
    {
        return clientFirst.user();
    }

    /** Why the authentication failed: Kafka's message for the client, or null. */
    public String failure()
    {
        return failure;
    }
}
