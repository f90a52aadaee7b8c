package io.ferrite.broker.e2e;

import io.ferrite.broker.StartupException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterClientQuotasResponseData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * AlterClientQuotas and DescribeClientQuotas as Kafka 4.4 answers them (its controller's checks and messages and its
 * image's filter, read from the 4.4 jars with javap): through kafka-clients' Admin, raw for what Admin does not send,
 * and kafka-configs.sh {@code --entity-type users|clients}; the quotas survive a restart and a damaged quotas file stops
 * the start.
 */
class ClientQuotasTest
{
    @TempDir
    Path dir;

    static ClientQuotaEntity entity(final String... typeAndName)
    {
        final Map<String, String> parts = new HashMap<>(); // a null name: the default entity, as Admin's
        for (int i = 0; i < typeAndName.length; i += 2)
        {
            parts.put(typeAndName[i], typeAndName[i + 1]);
        }
        return new ClientQuotaEntity(parts);
    }

    static ClientQuotaAlteration set(final ClientQuotaEntity entity, final String key, final Double value)
    {
        return new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op(key, value)));
    }

    static void alter(final Admin admin, final ClientQuotaAlteration... alterations) throws Exception
    {
        admin.alterClientQuotas(List.of(alterations)).all().get(30, TimeUnit.SECONDS);
    }

    private static Map<ClientQuotaEntity, Map<String, Double>> describe(final Admin admin, final ClientQuotaFilter filter) throws Exception
    {
        return admin.describeClientQuotas(filter).entities().get(30, TimeUnit.SECONDS);
    }

    private static Throwable refusal(final Admin admin, final ClientQuotaAlteration alteration)
    {
        return assertThrows(ExecutionException.class, () -> admin.alterClientQuotas(List.of(alteration)).all().get(30, TimeUnit.SECONDS))
            .getCause();
    }

    private static final ClientQuotaEntity ALICE = entity(ClientQuotaEntity.USER, "alice");
    private static final ClientQuotaEntity ALICE_C1 = entity(ClientQuotaEntity.USER, "alice", ClientQuotaEntity.CLIENT_ID, "c1");
    private static final ClientQuotaEntity C1 = entity(ClientQuotaEntity.CLIENT_ID, "c1");
    private static final ClientQuotaEntity DEFAULT_USER = entity(ClientQuotaEntity.USER, null);
    private static final ClientQuotaEntity IP = entity(ClientQuotaEntity.IP, "127.0.0.1");

    /** The five entities set by {@link #setFive}. */
    private static Map<ClientQuotaEntity, Map<String, Double>> five()
    {
        return Map.of(ALICE, Map.of("producer_byte_rate", 1024.0, "consumer_byte_rate", 2048.0),
            ALICE_C1, Map.of("consumer_byte_rate", 4096.0),
            C1, Map.of("producer_byte_rate", 8192.0, "request_percentage", 12.5),
            DEFAULT_USER, Map.of("producer_byte_rate", 512.0, "controller_mutation_rate", 3.5),
            IP, Map.of("connection_creation_rate", 10.0));
    }

    private static void setFive(final Admin admin) throws Exception
    {
        alter(admin, new ClientQuotaAlteration(ALICE, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0),
            new ClientQuotaAlteration.Op("consumer_byte_rate", 2048.0))), set(ALICE_C1, "consumer_byte_rate", 4096.0),
            new ClientQuotaAlteration(C1, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 8192.0),
                new ClientQuotaAlteration.Op("request_percentage", 12.5))),
            new ClientQuotaAlteration(DEFAULT_USER, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 512.0),
                new ClientQuotaAlteration.Op("controller_mutation_rate", 3.5))),
            set(IP, "connection_creation_rate", 10.0));
    }

    @Test
    void setDescribedByEveryFilterAndKeptAcrossARestart() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.plainAdmin())
            {
                setFive(admin);
                assertEquals(five(), describe(admin, ClientQuotaFilter.all()));
                assertEquals(Map.of(ALICE, five().get(ALICE)),
                    describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice")))));
                assertEquals(Map.of(ALICE, five().get(ALICE), ALICE_C1, five().get(ALICE_C1)),
                    describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice")))));
                assertEquals(Map.of(ALICE, five().get(ALICE), ALICE_C1, five().get(ALICE_C1)),
                    describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.USER)))),
                    "a specified-name match leaves the default user out");
                assertEquals(Map.of(DEFAULT_USER, five().get(DEFAULT_USER)),
                    describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.USER)))));
                assertEquals(Map.of(ALICE_C1, five().get(ALICE_C1), C1, five().get(C1)),
                    describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.CLIENT_ID, "c1")))));
                assertEquals(Map.of(), describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(
                    ClientQuotaEntity.USER, "bob")))));

                // a removal, a change and a no-op set; validateOnly changes nothing
                alter(admin, new ClientQuotaAlteration(ALICE, List.of(new ClientQuotaAlteration.Op("consumer_byte_rate", null),
                    new ClientQuotaAlteration.Op("producer_byte_rate", 3000.0))), set(C1, "request_percentage", 12.5));
                admin.alterClientQuotas(List.of(set(ALICE, "producer_byte_rate", 1.0)), new AlterClientQuotasOptions().validateOnly(true))
                    .all().get(30, TimeUnit.SECONDS);
                // removing an entity's last key removes the entity
                alter(admin, set(IP, "connection_creation_rate", null));
            }
            final Map<ClientQuotaEntity, Map<String, Double>> expected = new HashMap<>(five());
            expected.put(ALICE, Map.of("producer_byte_rate", 3000.0));
            expected.remove(IP);
            try (Admin admin = broker.plainAdmin())
            {
                assertEquals(expected, describe(admin, ClientQuotaFilter.all()));
            }
            broker.restart();
            try (Admin admin = broker.plainAdmin())
            {
                assertEquals(expected, describe(admin, ClientQuotaFilter.all()), "the quotas after a restart");
            }
        }
    }

    @Test
    void badAlterationsAreRefusedAsKafkaRefusesThem() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final Object[][] cases = {
                {set(ALICE, "bogus_rate", 1.0), InvalidRequestException.class, "Invalid configuration key bogus_rate"},
                {set(ALICE, "producer_byte_rate", 10.5), InvalidRequestException.class, "producer_byte_rate cannot be a fractional value."},
                {set(ALICE, "producer_byte_rate", -1.0), InvalidRequestException.class, "Quota producer_byte_rate must be greater than 0"},
                {set(ALICE, "producer_byte_rate", 0.0), InvalidRequestException.class, "Quota producer_byte_rate must be greater than 0"},
                {set(ALICE, "producer_byte_rate", Double.POSITIVE_INFINITY), InvalidRequestException.class,
                    "Quota producer_byte_rate must be a finite number"},
                {set(ALICE, "connection_creation_rate", 5.0), InvalidRequestException.class, "Invalid configuration key connection_creation_rate"},
                {set(IP, "producer_byte_rate", 5.0), InvalidRequestException.class, "Invalid configuration key producer_byte_rate"},
                {set(entity(ClientQuotaEntity.USER, ""), "producer_byte_rate", 5.0), InvalidRequestException.class, "Empty user not supported"},
                {set(entity(ClientQuotaEntity.USER, "alice", ClientQuotaEntity.IP, "127.0.0.1"), "producer_byte_rate", 5.0),
                    InvalidRequestException.class, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"},
                {set(entity(ClientQuotaEntity.IP, "no-such-host.invalid"), "connection_creation_rate", 5.0), InvalidRequestException.class,
                    "no-such-host.invalid is not a valid IP or resolvable host."},
                {set(entity("group", "g"), "producer_byte_rate", 5.0), InvalidRequestException.class, "Unhandled client quota entity type: group"},
            };
            for (final Object[] c : cases)
            {
                final Throwable refused = refusal(admin, (ClientQuotaAlteration)c[0]);
                assertInstanceOf((Class<?>)c[1], refused, String.valueOf(c[2]));
                assertEquals(c[2], refused.getMessage());
            }
            assertEquals(Map.of(), describe(admin, ClientQuotaFilter.all()), "nothing refused was stored");
            final Throwable mixed = assertThrows(ExecutionException.class, () -> describe(admin, ClientQuotaFilter.contains(List.of(
                ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.IP, "127.0.0.1"),
                ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice"))))).getCause();
            assertInstanceOf(InvalidRequestException.class, mixed);
            assertEquals("Invalid entity filter component combination. IP filter component should not be used with user or clientId "
                + "filter component.", mixed.getMessage());
            final Throwable unknown = assertThrows(ExecutionException.class, () -> describe(admin, ClientQuotaFilter.contains(List.of(
                ClientQuotaFilterComponent.ofEntity("group", "g"))))).getCause();
            assertInstanceOf(UnsupportedVersionException.class, unknown);
            assertEquals("Unsupported entity type group", unknown.getMessage());
        }
    }

    /** What Admin never sends, raw: a key twice for one entity, one entity twice, an empty entity; a filter naming a type twice. */
    @Test
    void rawRequestsAdminDoesNotSend() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final AlterClientQuotasRequestData alter = new AlterClientQuotasRequestData().setEntries(List.of(
                entry("twice", op("producer_byte_rate", 10), op("producer_byte_rate", 20)),
                entry("bob", op("producer_byte_rate", 30)), entry("bob", op("consumer_byte_rate", 40)),
                new AlterClientQuotasRequestData.EntryData().setEntity(List.of()).setOps(List.of(op("producer_byte_rate", 50)))));
            final AlterClientQuotasResponseData altered = new AlterClientQuotasResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.ALTER_CLIENT_QUOTAS, (short)1, alter)), (short)1);
            final Map<String, AlterClientQuotasResponseData.EntryData> byUser = new HashMap<>();
            altered.entries().forEach(e -> byUser.put(e.entity().isEmpty() ? "" : e.entity().get(0).entityName(), e));
            assertEquals(Set.of("twice", "bob", ""), byUser.keySet(), "one answer per entity");
            assertEquals(Errors.INVALID_REQUEST.code(), byUser.get("twice").errorCode());
            assertEquals("Ignoring duplicate entity ClientQuotaEntity(entries={user=twice})", byUser.get("twice").errorMessage());
            assertEquals(Errors.INVALID_REQUEST.code(), byUser.get("bob").errorCode());
            assertEquals("Ignoring duplicate entity ClientQuotaEntity(entries={user=bob})", byUser.get("bob").errorMessage());
            assertEquals(Errors.INVALID_REQUEST.code(), byUser.get("").errorCode());
            assertEquals("Invalid empty client quota entity", byUser.get("").errorMessage());

            final DescribeClientQuotasResponseData described = new DescribeClientQuotasResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.DESCRIBE_CLIENT_QUOTAS, (short)1, new DescribeClientQuotasRequestData().setComponents(List.of(
                    new DescribeClientQuotasRequestData.ComponentData().setEntityType("user").setMatchType((byte)2).setMatch(null),
                    new DescribeClientQuotasRequestData.ComponentData().setEntityType("user").setMatchType((byte)1).setMatch(null))))), (short)1);
            assertEquals(Errors.INVALID_REQUEST.code(), described.errorCode());
            assertEquals("Entity type user cannot appear more than once in the filter.", described.errorMessage());
            assertNull(described.entries());
        }
    }

    private static AlterClientQuotasRequestData.EntryData entry(final String user, final AlterClientQuotasRequestData.OpData... ops)
    {
        return new AlterClientQuotasRequestData.EntryData().setEntity(List.of(new AlterClientQuotasRequestData.EntityData()
            .setEntityType("user").setEntityName(user))).setOps(List.of(ops));
    }

    private static AlterClientQuotasRequestData.OpData op(final String key, final double value)
    {
        return new AlterClientQuotasRequestData.OpData().setKey(key).setValue(value);
    }

    @Test
    void kafkaConfigsSetsDescribesAndDeletesQuotas() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); KafkaToolSession tools = new KafkaToolSession())
        {
            KafkaTool.Run run = BrokerConfigsToolTest.configs(tools, broker, "--describe", "--entity-type", "users");
            assertEquals(List.of(), run.lines(), run.toString());
            run = BrokerConfigsToolTest.configs(tools, broker, "--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config",
                "producer_byte_rate=1024,consumer_byte_rate=2048");
            assertEquals(List.of("Completed updating config for user alice."), run.lines(), run.toString());
            run = BrokerConfigsToolTest.configs(tools, broker, "--alter", "--entity-type", "clients", "--entity-default", "--add-config", "producer_byte_rate=4096");
            assertEquals(List.of("Completed updating default config for clients in the cluster."), run.lines(), run.toString());
            run = BrokerConfigsToolTest.configs(tools, broker, "--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "c1",
                "--add-config", "request_percentage=50");
            assertEquals(List.of("Completed updating config for user alice."), run.lines(), run.toString()); // the tool's words
            run = BrokerConfigsToolTest.configs(tools, broker, "--describe", "--entity-type", "users", "--entity-name", "alice");
            assertEquals(List.of("Quota configs for user-principal 'alice' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0"),
                run.lines(), run.toString());
            run = BrokerConfigsToolTest.configs(tools, broker, "--describe", "--entity-type", "clients", "--entity-default");
            assertEquals(List.of("Quota configs for the default client-id are producer_byte_rate=4096.0"), run.lines(), run.toString());
            run = BrokerConfigsToolTest.configs(tools, broker, "--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "consumer_byte_rate");
            assertEquals(List.of("Completed updating config for user alice."), run.lines(), run.toString());
            run = BrokerConfigsToolTest.configs(tools, broker, "--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=1.5");
            assertEquals(1, run.status(), run.toString());
            assertTrue(run.err().contains("InvalidRequestException: producer_byte_rate cannot be a fractional value."), run.err());
            try (Admin admin = broker.plainAdmin())
            {
                assertEquals(Map.of(ALICE, Map.of("producer_byte_rate", 1024.0),
                    entity(ClientQuotaEntity.CLIENT_ID, null), Map.of("producer_byte_rate", 4096.0),
                    ALICE_C1, Map.of("request_percentage", 50.0)), describe(admin, ClientQuotaFilter.all()));
            }
        }
    }

    @Test
    void aDamagedQuotasFileStopsTheStartNamingTheFile() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            alter(admin, set(ALICE, "producer_byte_rate", 1024.0));
        }
        final Path file = dir.resolve("ferrite-client-quotas");
        final byte[] bytes = Files.readAllBytes(file);
        bytes[20] ^= 1;
        Files.write(file, bytes);
        final StartupException refused = assertThrows(StartupException.class, () -> new RunningBroker(dir, Map.of()));
        assertEquals(file + ": damaged: checksum mismatch", refused.getMessage());
        Files.delete(file); // the operator's way out: the start goes on without quotas
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            assertEquals(Collections.emptyMap(), describe(admin, ClientQuotaFilter.all()));
        }
    }
}
