package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.CreateDelegationTokenRequestDecoder;
import io.ferrite.wire.message.CreateDelegationTokenResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * CreateDelegationToken on a PLAINTEXT connection, as Kafka 4.4 answers it ({@link DelegationTokenHandlers}):
 * DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, timestamps -1, no token id or HMAC; the owner is the request's own
 * (v3+ {@code OwnerPrincipalType/Name}, echoed as given) when it names one, else the connection's {@code User:ANONYMOUS};
 * the requester (v3+) is always {@code User:ANONYMOUS}. A v3 owner with a name but a null type is UNKNOWN_SERVER_ERROR
 * with both principals {@code User:ANONYMOUS}, as Kafka's {@code KafkaPrincipal} refuses a null type there.
 */
final class CreateDelegationTokenHandler implements RequestHandler
{
    private final CreateDelegationTokenRequestDecoder request = new CreateDelegationTokenRequestDecoder();
    private final CreateDelegationTokenResponseEncoder response = new CreateDelegationTokenResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final boolean ownerNamed = version >= 3 && request.ownerPrincipalNameLength() > 0;
        final boolean nullType = ownerNamed && request.ownerPrincipalTypeIsNull();
        response.wrap(out, outOffset, version)
            .errorCode(nullType ? Errors.UNKNOWN_SERVER_ERROR : Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
        if (ownerNamed && !nullType)
        {
            response.principalType(in, request.ownerPrincipalTypeOffset(), request.ownerPrincipalTypeLength())
                .principalName(in, request.ownerPrincipalNameOffset(), request.ownerPrincipalNameLength());
        }
        else
        {
            response.principalType(DelegationTokenHandlers.PRINCIPAL_TYPE).principalName(DelegationTokenHandlers.PRINCIPAL_NAME);
        }
        if (version >= 3)
        {
            response.tokenRequesterPrincipalType(DelegationTokenHandlers.PRINCIPAL_TYPE)
                .tokenRequesterPrincipalName(DelegationTokenHandlers.PRINCIPAL_NAME);
        }
        response.issueTimestampMs(-1).expiryTimestampMs(-1).maxTimestampMs(-1).tokenId("")
            .hmac(DelegationTokenHandlers.NO_HMAC).throttleTimeMs(0);
        return outOffset + response.finish();
    }
}
