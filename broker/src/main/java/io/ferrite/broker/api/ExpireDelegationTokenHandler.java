package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ExpireDelegationTokenResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** ExpireDelegationToken on a PLAINTEXT connection, as Kafka 4.4 answers it: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, expiry -1. */
final class ExpireDelegationTokenHandler implements RequestHandler
{
    private final ExpireDelegationTokenResponseEncoder response = new ExpireDelegationTokenResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        response.wrap(out, outOffset, version).errorCode(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED).expiryTimestampMs(-1)
            .throttleTimeMs(0);
        return outOffset + response.finish();
    }
}
