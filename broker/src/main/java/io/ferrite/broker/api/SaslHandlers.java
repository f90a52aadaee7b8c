package io.ferrite.broker.api;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.SaslAuthenticateResponseEncoder;
import io.ferrite.wire.message.SaslHandshakeResponseEncoder;

/**
 * SaslHandshake and SaslAuthenticate where no authentication is under way: on a PLAINTEXT listener, or on a SASL one
 * after the connection authenticated (before that its {@code SaslAuthenticator} answers them). As Kafka 4.4's
 * {@code KafkaApis}: ILLEGAL_SASL_STATE. Registered so that ApiVersions advertises both, as Kafka does: kafka-clients
 * reads their versions there before it authenticates.
 */
public final class SaslHandlers
{
    static final short ILLEGAL_SASL_STATE = 34;

    private SaslHandlers()
    {
    }

    public static void register(final Apis apis)
    {
        apis.registerLazily(ApiKeys.SASL_HANDSHAKE, () ->
        {
            final SaslHandshakeResponseEncoder response = new SaslHandshakeResponseEncoder();
            return (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                response.wrap(out, outOffset, version).errorCode(ILLEGAL_SASL_STATE).mechanisms(0);
                return outOffset + response.finish();
            };
        }).registerLazily(ApiKeys.SASL_AUTHENTICATE, () ->
        {
            final SaslAuthenticateResponseEncoder response = new SaslAuthenticateResponseEncoder();
            return (api, version, in, offset, limit, out, outOffset, connection) -> outOffset + response.wrap(out, outOffset, version)
                .errorCode(ILLEGAL_SASL_STATE).errorMessage("SaslAuthenticate request received after successful authentication")
                .authBytes(new byte[0]).sessionLifetimeMs(0).finish();
        });
    }
}
