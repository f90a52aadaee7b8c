package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeDelegationTokenResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** DescribeDelegationToken on a PLAINTEXT connection, as Kafka 4.4 answers it: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, no tokens. */
final class DescribeDelegationTokenHandler implements RequestHandler
{
    private final DescribeDelegationTokenResponseEncoder response = new DescribeDelegationTokenResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        response.wrap(out, outOffset, version).errorCode(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED).tokens(0);
        response.throttleTimeMs(0);
        return outOffset + response.finish();
    }
}
