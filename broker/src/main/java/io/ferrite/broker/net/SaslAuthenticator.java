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
 *
 * <p><b>Re-authentication</b> (KIP-368, as Kafka 4.4's {@code SaslServerAuthenticator}, {@code KafkaChannel} and the
 * broker's {@code Processor} run it). With {@code connections.max.reauth.ms} (the listener's, per mechanism) above 0 the
 * authentication's last SaslAuthenticate (v1+) answers it as {@code session_lifetime_ms} and the connection's session
 * ends that long after ({@code Connection.sessionEndMs}; Kafka takes the smaller of it and the credential's own
 * lifetime, which only delegation tokens have and Ferrite does not issue). A client that authenticated with SaslHandshake
 * v0 or SaslAuthenticate v0 cannot re-authenticate, but its session ends all the same (Kafka computes the expiry on both
 * paths): its connection closes at its first request after the end. The object stays with its connection after the
 * authentication (not as its gate), so that a SaslHandshake on the authenticated connection — {@link
 * #beginReauthentication} — makes it the gate again for one more exchange, with no allocation but the exchange's own.
 * Kafka's rules, each kept here: a re-authentication begins only where the session has an end and at most once a second
 * (else the SaslHandshake is an ordinary request, answered ILLEGAL_SASL_STATE by {@code api.SaslHandlers}, the connection
 * kept); the mechanism must be the one the session began with (another enabled one: the handshake is answered NONE, the
 * next frame fails the re-authentication, unanswered, as Kafka's REAUTH_BAD_MECHANISM state; one not enabled:
 * UNSUPPORTED_SASL_MECHANISM); the principal must stay the same (SASL_AUTHENTICATION_FAILED, "Cannot change principals
 * during re-authentication from User.a: User.b", then the close); a wrong password (a SCRAM credential changed or
 * deleted meanwhile) fails as a first authentication fails, Kafka's SCRAM message saying "during re-authentication"; a
 * request other than SaslAuthenticate pipelined behind the re-authentication's SaslHandshake is taken as part of the
 * exchange and closes the connection (Kafka answers it ILLEGAL_SASL_STATE after the delay, then closes; Ferrite closes
 * at once, as for a first authentication). Any failure costs the connection: Kafka's INFO line then says "Failed
 * re-authentication with". The principal cannot change, so whatever is cached for the connection under it (its ACL
 * decisions, {@code acl.TopicDecisions}, the transactional id's among them) stays true across a re-authentication.
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
        BARE_TOKEN,
        /** Authenticated: not the connection's gate, until a re-authentication begins. */
        DONE
    }

    /** Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a second SaslHandshake within it is an ordinary request. */
    static final long MIN_REAUTH_INTERVAL_MS = 1000;

    private final Connection connection;
    private final RequestHandler apis;
    private final Listener listener;
    private State state = State.VERSIONS_OR_HANDSHAKE;
    /** The SCRAM exchange under way (a SCRAM mechanism was chosen), else null: PLAIN. */
    private ScramServer scram;
    /** Why the last SCRAM message failed, or null. */
    private String scramFailure;
    /** The mechanism of the exchange under way (its SaslHandshake's). */
    private String exchangeMechanism;
    /** The mechanism the session was authenticated with, or null before the first authentication. */
    private String sessionMechanism;
    /** When the last re-authentication began (currentTimeMillis), 0 before the first. */
    private long reauthenticationStartMs;
    /** A re-authentication asked for another mechanism than the session's: Kafka's message, failed at the next frame; else null. */
    private String badMechanism;

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

    /** Why a connection closed at {@link #sessionEnded} (a debug line, as Kafka's "Disconnecting expired channel"). */
    static final String SESSION_ENDED = "its SASL session ended (connections.max.reauth.ms) and it did not re-authenticate";

    /**
     * An authenticated connection's SaslHandshake, or a request after its SASL session's end (by the select pass's clock:
     * no clock read per request), as Kafka 4.4's Processor takes them: a SaslHandshake begins a re-authentication if it
     * may ({@link #beginReauthentication}); else the request, whatever it is, ends the connection (returns true, counted)
     * when the session ended, or is answered as usual (a SaslHandshake: ILLEGAL_SASL_STATE).
     */
    static boolean sessionEnded(final Connection connection, final ApiKeys api)
    {
        if (api == ApiKeys.SASL_HANDSHAKE && connection.sasl != null && connection.sasl.beginReauthentication())
        {
            return false;
        }
        if (connection.activeMs > connection.sessionEndMs)
        {
            connection.stats().sessionEnded();
            return true;
        }
        return false;
    }

    /** Whether the connection authenticated before: the exchange under way (if any) is a re-authentication. */
    boolean reauthenticating()
    {
        return sessionMechanism != null;
    }

    /**
     * A SaslHandshake came on the authenticated connection: begins a re-authentication (this the gate again, the
     * handshake its first request) and returns true, or returns false — the session has no end (no
     * {@code connections.max.reauth.ms}), or the last re-authentication began less than a second ago — and the request is
     * an ordinary one, as in Kafka's {@code KafkaChannel.maybeBeginServerReauthentication}.
     */
    boolean beginReauthentication()
    {
        if (state != State.DONE || connection.sessionEndMs == Long.MAX_VALUE)
        {
            return false;
        }
        final long nowMs = System.currentTimeMillis();
        if (reauthenticationStartMs != 0 && nowMs - reauthenticationStartMs < MIN_REAUTH_INTERVAL_MS)
        {
            return false;
        }
        reauthenticationStartMs = nowMs;
        state = State.HANDSHAKE;
        connection.gate = this;
        return true;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        if (badMechanism != null)
        {
            return failed(RequestHandler.CLOSE, badMechanism); // Kafka's REAUTH_BAD_MECHANISM: whatever the frame, unanswered
        }
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
        exchangeMechanism = mechanism;
        if (sessionMechanism != null && !sessionMechanism.equals(mechanism))
        {
            // Kafka answers the handshake NONE, then fails whatever comes next
            badMechanism = "SASL mechanism '" + mechanism + "' requested by client is not supported for re-authentication of mechanism '"
                + sessionMechanism + "'";
            return end;
        }
        final ScramMechanism scramMechanism = ScramMechanism.forName(mechanism);
        if (scramMechanism != null)
        {
            scram = new ScramServer(scramMechanism, listener.scramCredentials(), sessionMechanism != null);
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
        if (scram != null)
        {
            answer = evaluateScram(in, request.authBytesOffset(), length);
            failure = answer == null ? scramFailure : null;
        }
        else
        {
            failure = verify(in, request.authBytesOffset(), length);
        }
        // the session's lifetime goes with the exchange's last answer (Kafka: 0 before the exchange is complete)
        final long lifetimeMs = failure == null && state == State.DONE ? listener.reauthMs(sessionMechanism) : 0;
        final SaslAuthenticateResponseEncoder response = new SaslAuthenticateResponseEncoder().wrap(out, outOffset, version);
        response.errorCode(failure == null ? 0 : SASL_AUTHENTICATION_FAILED).errorMessage(failure)
            .authBytes(answer == null ? new byte[0] : answer).sessionLifetimeMs(lifetimeMs);
        final int end = outOffset + response.finish();
        return failure == null ? end : failed(end, failure);
    }

    /**
     * A bare token (after a SaslHandshake v0) at {@code in[offset, limit)}: PLAIN's answer is an empty token, SCRAM's the
     * server's message, written at {@code outOffset}; a failure is the close after the delay, unanswered.
     */
    int bareToken(final DirectBuffer in, final int offset, final int limit, final int outOffset)
    {
        if (badMechanism != null)
        {
            return failed(RequestHandler.CLOSE, badMechanism);
        }
        if (scram != null)
        {
            final byte[] answer = evaluateScram(in, offset, limit - offset);
            if (answer == null)
            {
                return failed(RequestHandler.CLOSE, scramFailure);
            }
            connection.out.putBytes(outOffset, answer);
            return outOffset + answer.length;
        }
        final String failure = verify(in, offset, limit - offset);
        return failure == null ? outOffset : failed(RequestHandler.CLOSE, failure);
    }

    /**
     * The next SCRAM message of the client at {@code in[offset, offset + length)}: the server's answer, or null: failed,
     * {@link #scramFailure} says why (the exchange's own failure, or a re-authentication as another principal).
     */
    private byte[] evaluateScram(final DirectBuffer in, final int offset, final int length)
    {
        final byte[] token = new byte[length];
        in.getBytes(offset, token);
        final ScramServer exchange = scram;
        final byte[] answer = exchange.evaluate(token);
        java.util.Arrays.fill(token, (byte)0);
        scramFailure = exchange.failure();
        if (exchange.complete())
        {
            // Kafka checks the principal before it sends the server-final message: a refused one gets no signature
            scramFailure = authenticated(exchange.user());
            return scramFailure == null ? answer : null;
        }
        return answer;
    }

    /**
     * Authenticated as {@code user}: every request goes to the broker's handlers from now on, and the session ends after
     * the mechanism's {@code connections.max.reauth.ms} (if any); returns null. A re-authentication as another principal
     * than the session's is refused instead: Kafka's message ({@code ReauthInfo.ensurePrincipalUnchanged}).
     */
    private String authenticated(final String user)
    {
        scram = null;
        final String principal = "User:" + user;
        if (sessionMechanism != null && !principal.equals(connection.principal))
        {
            return "Cannot change principals during re-authentication from User." + connection.principal.substring("User:".length())
                + ": User." + user;
        }
        final boolean again = sessionMechanism != null;
        sessionMechanism = exchangeMechanism;
        connection.principal = principal; // the same on a re-authentication: what was decided for it stays true
        final long lifetimeMs = listener.reauthMs(sessionMechanism);
        connection.sessionEndMs = lifetimeMs > 0 ? System.currentTimeMillis() + lifetimeMs : Long.MAX_VALUE;
        connection.gate = null;
        state = State.DONE;
        connection.stats().authenticated(again);
        return null;
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
        return authenticated(user);
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
