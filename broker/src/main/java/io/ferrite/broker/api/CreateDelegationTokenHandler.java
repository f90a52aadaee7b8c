package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.CreateDelegationTokenResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * CreateDelegationToken on a PLAINTEXT connection, as Kafka 4.4 answers it ({@link DelegationTokenHandlers}):
 * DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, the owner (and from v3 the requester) {@code User:ANONYMOUS}, timestamps -1,
 * no token id or HMAC.
 */
final class CreateDelegationTokenHandler implements RequestHandler
{
    private final CreateDelegationTokenResponseEncoder response = new CreateDelegationTokenResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        response.wrap(out, outOffset, version).errorCode(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
            .principalType(DelegationTokenHandlers.PRINCIPAL_TYPE).principalName(DelegationTokenHandlers.PRINCIPAL_NAME);
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
