package io.ferrite.broker.api;

import io.ferrite.wire.message.ApiKeys;

/**
 * Create-, Renew-, Expire- and DescribeDelegationToken ({@code kafka-delegation-tokens.sh}, Admin's
 * {@code createDelegationToken} ...): Ferrite's only listener is PLAINTEXT, and Kafka 4.4 answers these on a
 * PLAINTEXT connection with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (clients: {@code UnsupportedByAuthenticationException},
 * "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels ..."), so Ferrite answers them so
 * (each answer's shape checked against a Kafka 4.4 node with {@code /work/shared/kafka-ref}), with Kafka's version
 * ranges, rather than closing the connection. The principal a PLAINTEXT connection has is Kafka's {@code User:ANONYMOUS}.
 */
public final class DelegationTokenHandlers
{
    static final String PRINCIPAL_TYPE = "User";
    static final String PRINCIPAL_NAME = "ANONYMOUS";
    static final byte[] NO_HMAC = new byte[0];

    private DelegationTokenHandlers()
    {
    }

    public static void register(final Apis apis)
    {
        apis.registerLazily(ApiKeys.CREATE_DELEGATION_TOKEN, CreateDelegationTokenHandler::new)
            .registerLazily(ApiKeys.RENEW_DELEGATION_TOKEN, RenewDelegationTokenHandler::new)
            .registerLazily(ApiKeys.EXPIRE_DELEGATION_TOKEN, ExpireDelegationTokenHandler::new)
            .registerLazily(ApiKeys.DESCRIBE_DELEGATION_TOKEN, DescribeDelegationTokenHandler::new);
    }
}
