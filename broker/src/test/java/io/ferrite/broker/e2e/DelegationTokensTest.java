package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.message.CreateDelegationTokenRequestData;
import org.apache.kafka.common.message.CreateDelegationTokenResponseData;
import org.apache.kafka.common.message.DescribeDelegationTokenRequestData;
import org.apache.kafka.common.message.DescribeDelegationTokenResponseData;
import org.apache.kafka.common.message.ExpireDelegationTokenRequestData;
import org.apache.kafka.common.message.ExpireDelegationTokenResponseData;
import org.apache.kafka.common.message.RenewDelegationTokenRequestData;
import org.apache.kafka.common.message.RenewDelegationTokenResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The delegation token APIs answered as a Kafka 4.4 node answers them on a PLAINTEXT listener, Ferrite's only kind
 * (each answer below taken from one started with {@code /work/shared/kafka-ref}): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
 * which Admin raises as {@code UnsupportedByAuthenticationException}; kafka-delegation-tokens.sh in KafkaToolsTest.
 */
class DelegationTokensTest
{
    private static final String NOT_ALLOWED =
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.";

    @TempDir
    Path dir;

    @Test
    void everyVersionIsAnsweredAsKafkaOnPlaintext() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final var advertised = raw.apiVersions().apiKeys();
            assertEquals(List.of(1, 3, 1, 2, 1, 2, 1, 3), List.of(
                (int)advertised.find(ApiKeys.CREATE_DELEGATION_TOKEN.id).minVersion(), (int)advertised.find(ApiKeys.CREATE_DELEGATION_TOKEN.id).maxVersion(),
                (int)advertised.find(ApiKeys.RENEW_DELEGATION_TOKEN.id).minVersion(), (int)advertised.find(ApiKeys.RENEW_DELEGATION_TOKEN.id).maxVersion(),
                (int)advertised.find(ApiKeys.EXPIRE_DELEGATION_TOKEN.id).minVersion(), (int)advertised.find(ApiKeys.EXPIRE_DELEGATION_TOKEN.id).maxVersion(),
                (int)advertised.find(ApiKeys.DESCRIBE_DELEGATION_TOKEN.id).minVersion(), (int)advertised.find(ApiKeys.DESCRIBE_DELEGATION_TOKEN.id).maxVersion()),
                "advertised as Kafka 4.4");
            for (short v = 1; v <= 3; v++)
            {
                ByteBuffer body = raw.exchange(ApiKeys.CREATE_DELEGATION_TOKEN, v, new CreateDelegationTokenRequestData().setMaxLifetimeMs(-1));
                final String requester = v >= 3 ? "'User', tokenRequesterPrincipalName='ANONYMOUS'" : "'', tokenRequesterPrincipalName=''";
                assertEquals("CreateDelegationTokenResponseData(errorCode=64, principalType='User', principalName='ANONYMOUS', "
                    + "tokenRequesterPrincipalType=" + requester + ", issueTimestampMs=-1, expiryTimestampMs=-1, maxTimestampMs=-1, "
                    + "tokenId='', hmac=[], throttleTimeMs=0)", new CreateDelegationTokenResponseData(new ByteBufferAccessor(body), v).toString(),
                    "v" + v);
                assertEquals(0, body.remaining());
                body = raw.exchange(ApiKeys.DESCRIBE_DELEGATION_TOKEN, v, new DescribeDelegationTokenRequestData().setOwners(null));
                assertEquals("DescribeDelegationTokenResponseData(errorCode=64, tokens=[], throttleTimeMs=0)",
                    new DescribeDelegationTokenResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);
                if (v <= 2)
                {
                    body = raw.exchange(ApiKeys.RENEW_DELEGATION_TOKEN, v, new RenewDelegationTokenRequestData().setHmac(new byte[] {1, 2})
                        .setRenewPeriodMs(1000));
                    assertEquals("RenewDelegationTokenResponseData(errorCode=64, expiryTimestampMs=-1, throttleTimeMs=0)",
                        new RenewDelegationTokenResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);
                    body = raw.exchange(ApiKeys.EXPIRE_DELEGATION_TOKEN, v, new ExpireDelegationTokenRequestData().setHmac(new byte[] {1, 2})
                        .setExpiryTimePeriodMs(1000));
                    assertEquals("ExpireDelegationTokenResponseData(errorCode=64, expiryTimestampMs=-1, throttleTimeMs=0)",
                        new ExpireDelegationTokenResponseData(new ByteBufferAccessor(body), v).toString(), "v" + v);
                }
            }
        }
    }

    /**
     * From v3 Kafka 4.4 answers with the owner the request names ({@code KafkaApis.handleCreateTokenRequest} builds it
     * before refusing the PLAINTEXT request), the connection's {@code User:ANONYMOUS} when the name is empty or null, and
     * UNKNOWN_SERVER_ERROR with both principals {@code User:ANONYMOUS} for a name without a type (its KafkaPrincipal
     * refuses a null type; the request's error answer names ANONYMOUS). v1-2 have no owner fields.
     */
    @Test
    void createV3EchoesTheRequestedOwnerAsKafka() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final short v3 = 3;
            ByteBuffer body = raw.exchange(ApiKeys.CREATE_DELEGATION_TOKEN, v3, new CreateDelegationTokenRequestData()
                .setOwnerPrincipalType("User").setOwnerPrincipalName("bob").setMaxLifetimeMs(-1));
            assertEquals("CreateDelegationTokenResponseData(errorCode=64, principalType='User', principalName='bob', "
                + "tokenRequesterPrincipalType='User', tokenRequesterPrincipalName='ANONYMOUS', issueTimestampMs=-1, expiryTimestampMs=-1, "
                + "maxTimestampMs=-1, tokenId='', hmac=[], throttleTimeMs=0)",
                new CreateDelegationTokenResponseData(new ByteBufferAccessor(body), v3).toString());
            assertEquals(0, body.remaining());
            body = raw.exchange(ApiKeys.CREATE_DELEGATION_TOKEN, v3, new CreateDelegationTokenRequestData()
                .setOwnerPrincipalType("Group").setOwnerPrincipalName("").setMaxLifetimeMs(-1));
            assertEquals("CreateDelegationTokenResponseData(errorCode=64, principalType='User', principalName='ANONYMOUS', "
                + "tokenRequesterPrincipalType='User', tokenRequesterPrincipalName='ANONYMOUS', issueTimestampMs=-1, expiryTimestampMs=-1, "
                + "maxTimestampMs=-1, tokenId='', hmac=[], throttleTimeMs=0)",
                new CreateDelegationTokenResponseData(new ByteBufferAccessor(body), v3).toString(), "an empty owner name: the connection's");
            body = raw.exchange(ApiKeys.CREATE_DELEGATION_TOKEN, v3, new CreateDelegationTokenRequestData()
                .setOwnerPrincipalType(null).setOwnerPrincipalName("bob").setMaxLifetimeMs(-1));
            assertEquals("CreateDelegationTokenResponseData(errorCode=-1, principalType='User', principalName='ANONYMOUS', "
                + "tokenRequesterPrincipalType='User', tokenRequesterPrincipalName='ANONYMOUS', issueTimestampMs=-1, expiryTimestampMs=-1, "
                + "maxTimestampMs=-1, tokenId='', hmac=[], throttleTimeMs=0)",
                new CreateDelegationTokenResponseData(new ByteBufferAccessor(body), v3).toString(), "a name without a type");
        }
    }

    @Test
    void adminCallsFailAsOnKafkaOverPlaintext() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            for (final org.apache.kafka.common.KafkaFuture<?> future : List.of(admin.createDelegationToken().delegationToken(),
                admin.describeDelegationToken().delegationTokens(), admin.renewDelegationToken(new byte[] {1}).expiryTimestamp(),
                admin.expireDelegationToken(new byte[] {1}).expiryTimestamp()))
            {
                final ExecutionException ex = assertThrows(ExecutionException.class, () -> future.get(30, TimeUnit.SECONDS));
                assertInstanceOf(UnsupportedByAuthenticationException.class, ex.getCause());
                assertEquals(NOT_ALLOWED, ex.getCause().getMessage());
            }
        }
    }
}
