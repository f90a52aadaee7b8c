package io.ferrite.broker.net;

import io.ferrite.broker.scram.ScramMechanism;
import io.ferrite.broker.scram.ScramServer;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ArrayEncoder;
import io.ferrite.wire.message.SaslAuthenticateRequestDecoder;
import io.ferrite.wire.message.SaslAuthenticateResponseEncoder;
import io.ferrite.wire.message.SaslHandshakeRequestDecoder;
import io.ferrite.wire.message.SaslHandshakeResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * The SASL server side of one connection of a SASL listener, as Kafka 4.4's {@code SaslServerAuthenticator} behaves:
 * the connection's gate ({@code Connection.gate}) until it authenticates, then gone (the request path after it is the
 * same as a PLAINTEXT connection's: nothing is looked at per request but that the gate is null).
 *
 * <p>Before the handshake only ApiVersions (answered as always, once, as the connection's first request: a second one
 * closes the connection unanswered, as Kafka's IllegalStateException does) and SaslHandshake are taken; any other request
 * closes the connection without an answer (Kafka: "Unexpected Kafka request of type ... during SASL handshake"). After a
 * SaslHandshake v1 a request other than SaslAuthenticate also closes the connection at once, unanswered. Kafka 4.4
 * differs there: it answers that request, in its own API's format, with ILLEGAL_SASL_STATE ("Unexpected Kafka request
 * of type X during SASL authentication") after the failed-authentication delay, then closes. Ferrite has no error
 * response for every API; no kafka-clients or librdkafka flow sends such a request. A mechanism
 * the listener does not offer is UNSUPPORTED_SASL_MECHANISM with the ones it does, and the connection closes. After a
 * SaslHandshake v1 the client authenticates with SaslAuthenticate (v0-v2: once for PLAIN, twice for SCRAM, whose
 * exchange {@link ScramServer} runs); after a v0 one it sends its tokens as bare size-prefixed frames and is answered with
 * bare ones (PLAIN's empty; Kafka still takes that form). A failed authentication is
 * SASL_AUTHENTICATION_FAILED with Kafka's message (a bare token's: no answer), written after
 * {@code connection.failed.authentication.delay.ms}, and the connection closes; its others are not held up (the
 * delay is a pending response of this connection). A frame over {@code sasl.server.max.receive.size} (the listener's; Kafka's
 * default {@link #MAX_RECEIVE_SIZE}) before authentication fails
 * it too: no answer, the close after the delay (Kafka: "Failing SASL authentication due to invalid receive size").
 * Nothing here logs a token, a password or a proof.
 */
final class SaslAuthenticator implements RequestHandler
{
    static final short SASL_AUTHENTICATION_FAILED = 58;
    static final short UNSUPPORTED_SASL_MECHANISM = 33;
    /** Kafka's {@code sasl.server.max.receive.size} default: the largest frame before a connection authenticated. */
    static final int MAX_RECEIVE_SIZE = 524288;
    static final String INVALID_CREDENTIALS = "Authentication failed: Invalid username or password";

    private enum State
    {
        /** The first request: ApiVersions or SaslHandshake. */
        VERSIONS_OR_HANDSHAKE,
        /** After an ApiVersions: SaslHandshake only. */
        HANDSHAKE,
        AUTHENTICATE,
        BARE_TOKEN
    }

    private final Connection connection;
    private final RequestHandler apis;
    private final Listener listener;
    private State state = State.VERSIONS_OR_HANDSHAKE;
    /** The SCRAM exchange under way (a SCRAM mechanism was chosen), else null: PLAIN. */
    private ScramServer scram;

    SaslAuthenticator(final Connection connection, final RequestHandler apis)
    {
        this.connection = connection;
        this.apis = apis;
        this.listener = connection.listener();
    }

    /** After a SaslHandshake v0: the next frame is a bare token, not a request. */
    boolean bareToken()
    {
        return state == State.BARE_TOKEN;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        if (state == State.VERSIONS_OR_HANDSHAKE && api == ApiKeys.API_VERSIONS)
        {
            state = State.HANDSHAKE;
            return apis.handle(api, version, in, offset, limit, out, outOffset, connection);
        }
        if ((state == State.VERSIONS_OR_HANDSHAKE || state == State.HANDSHAKE) && api == ApiKeys.SASL_HANDSHAKE)
        {
            return handshake(version, in, offset, limit, out, outOffset);
        }
        if (state == State.AUTHENTICATE && api == ApiKeys.SASL_AUTHENTICATE)
        {
            return authenticate(version, in, offset, limit, out, outOffset);
        }
        // Kafka: an unexpected request before the handshake ends the connection; after a v1 handshake Kafka answers it with
        // ILLEGAL_SASL_STATE after the delay, Ferrite closes at once (see the class comment)
        return CLOSE;
    }

    private int handshake(final short version, final DirectBuffer in, final int offset, final int limit, final MutableDirectBuffer out,
        final int outOffset)
    {
        final SaslHandshakeRequestDecoder request = new SaslHandshakeRequestDecoder();
        request.wrap(in, offset, limit, version);
        final String mechanism = request.mechanism();
        final List<String> offered = listener.mechanisms();
        final boolean supported = offered.contains(mechanism);
        final SaslHandshakeResponseEncoder response = new SaslHandshakeResponseEncoder().wrap(out, outOffset, version);
        response.errorCode(supported ? 0 : UNSUPPORTED_SASL_MECHANISM);
        final ArrayEncoder mechanisms = response.mechanisms(offered.size());
        for (final String m : offered)
        {
            mechanisms.addString(m);
        }
        final int end = outOffset + response.finish();
        if (!supported)
        {
            return failed(end, "SASL mechanism not offered"); // not the client's text: it may be 512 KiB long
        }
        state = version >= 1 ? State.AUTHENTICATE : State.BARE_TOKEN;
        final ScramMechanism scramMechanism = ScramMechanism.forName(mechanism);
        if (scramMechanism != null)
        {
            scram = new ScramServer(scramMechanism, listener.scramCredentials());
        }
        return end;
    }

    private int authenticate(final short version, final DirectBuffer in, final int offset, final int limit, final MutableDirectBuffer out,
        final int outOffset)
    {
        final SaslAuthenticateRequestDecoder request = new SaslAuthenticateRequestDecoder();
        request.wrap(in, offset, limit, version);
        final int length = request.authBytesIsNull() ? 0 : request.authBytesLength();
        byte[] answer = null;
        final String failure;
        final ScramServer exchange = scram; // cleared once authenticated
        if (exchange != null)
        {
            answer = evaluateScram(in, request.authBytesOffset(), length);
            failure = exchange.failure();
        }
        else
        {
            failure = verify(in, request.authBytesOffset(), length);
        }
        final SaslAuthenticateResponseEncoder response = new SaslAuthenticateResponseEncoder().wrap(out, outOffset, version);
        response.errorCode(failure == null ? 0 : SASL_AUTHENTICATION_FAILED).errorMessage(failure)
            .authBytes(answer == null ? new byte[0] : answer).sessionLifetimeMs(0);
        final int end = outOffset + response.finish();
        return failure == null ? end : failed(end, failure);
    }

    /**
     * A bare token (after a SaslHandshake v0) at {@code in[offset, limit)}: PLAIN's answer is an empty token, SCRAM's the
     * server's message, written at {@code outOffset}; a failure is the close after the delay, unanswered.
     */
    int bareToken(final DirectBuffer in, final int offset, final int limit, final int outOffset)
    {
        if (scram != null)
        {
            final byte[] answer = evaluateScram(in, offset, limit - offset);
            if (answer == null)
            {
                return failed(RequestHandler.CLOSE, scram.failure());
            }
            connection.out.putBytes(outOffset, answer);
            return outOffset + answer.length;
        }
        final String failure = verify(in, offset, limit - offset);
        return failure == null ? outOffset : failed(RequestHandler.CLOSE, failure);
    }

    /** The next SCRAM message of the client at {@code in[offset, offset + length)}: the server's answer, or null (failed). */
    private byte[] evaluateScram(final DirectBuffer in, final int offset, final int length)
    {
        final byte[] token = new byte[length];
        in.getBytes(offset, token);
        final byte[] answer = scram.evaluate(token);
        java.util.Arrays.fill(token, (byte)0);
        if (scram.complete())
        {
            authenticated(scram.user());
        }
        return answer;
    }

    /** Authenticated as {@code user}: every request goes to the broker's handlers from now on. */
    private void authenticated(final String user)
    {
        connection.principal = "User:" + user;
        connection.gate = null;
        scram = null;
    }

    /** Checks a PLAIN token ({@code authzid NUL user NUL password}): null when it is a user's, else Kafka's message. */
    private String verify(final DirectBuffer in, final int offset, final int length)
    {
        final byte[] token = new byte[length];
        in.getBytes(offset, token);
        final String[] parts = new String(token, StandardCharsets.UTF_8).split("\u0000", -1);
        java.util.Arrays.fill(token, (byte)0);
        if (parts.length != 3)
        {
            // Kafka's PlainSaslServer reads at most 4 NUL-separated parts, and names how many it read
            return "Invalid SASL/PLAIN response: expected 3 tokens, got " + Math.min(parts.length, 4);
        }
        final String user = parts[1];
        if (user.isEmpty())
        {
            return "Authentication failed: username not specified";
        }
        if (parts[2].isEmpty())
        {
            return "Authentication failed: password not specified";
        }
        final byte[] expected = listener.password(user);
        final byte[] given = parts[2].getBytes(StandardCharsets.UTF_8);
        // constant time over the password; an unknown user is compared too, so both failures take as long
        final boolean matches = MessageDigest.isEqual(expected == null ? new byte[given.length] : expected, given) && expected != null;
        if (!matches)
        {
            return INVALID_CREDENTIALS;
        }
        if (!parts[0].isEmpty() && !parts[0].equals(user))
        {
            return "Authentication failed: Client requested an authorization id that is different from username";
        }
        authenticated(user);
        return null;
    }

    /** A frame over {@link #MAX_RECEIVE_SIZE} before authentication: as a failed authentication, no answer, the close after the delay. */
    void oversized()
    {
        failed(RequestHandler.CLOSE, "frame over sasl.server.max.receive.size before authentication");
    }

    /**
     * The answer ending at {@code end} (or none: {@link RequestHandler#CLOSE}) goes after the delay, then the connection
     * closes, with Kafka's INFO line "Failed authentication with <client> (<why>)" ({@code why} Kafka's message, never a
     * token's bytes).
     */
    private int failed(final int end, final String why)
    {
        connection.defer(new DelayedFailure(end, System.currentTimeMillis() + listener.failedAuthenticationDelayMs(),
            why));
        return DEFERRED;
    }

    /** A failure's answer, held back until its time; the connection closes once it is written. */
    private static final class DelayedFailure implements PendingResponse
    {
        private final int end;
        private final long dueMs;
        private final String why;

        DelayedFailure(final int end, final long dueMs, final String why)
        {
            this.end = end;
            this.dueMs = dueMs;
            this.why = why;
        }

        @Override
        public int poll(final Connection connection, final int outOffset, final long nowMs)
        {
            if (nowMs < dueMs)
            {
                return NOT_READY;
            }
            connection.closeAfterResponse = why;
            return end;
        }

        @Override
        public long deadlineMs()
        {
            return dueMs;
        }
    }
}
