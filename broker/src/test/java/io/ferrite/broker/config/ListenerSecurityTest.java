package io.ferrite.broker.config;

import io.ferrite.broker.config.ListenerEndpoints.Endpoint;
import io.ferrite.log.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The listener settings as Kafka 4.4 reads them, what is refused and with which message, and PLAIN's JAAS users. */
class ListenerSecurityTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        + "  username=\"admin\" password=\"admin-secret\" user_alice=\"alice-secret\" user_bob=b0b;";

    private static BrokerConfig config(final String... pairs)
    {
        final Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2)
        {
            values.put(pairs[i], pairs[i + 1]);
        }
        return BrokerConfig.of(values);
    }

    private static String refused(final String... pairs)
    {
        return assertThrows(ConfigException.class, () -> config(pairs)).getMessage();
    }

    @Test
    void reauthenticationLifetimesPerMechanismAsKafkasSaslChannelBuilderReadsThem()
    {
        final BrokerConfig config = config("listeners", "A://:9094,B://:9095,C://:9096",
            "listener.security.protocol.map", "A:SASL_PLAINTEXT,B:SASL_PLAINTEXT,C:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256", "connections.max.reauth.ms", "60000",
            "listener.name.a.plain.sasl.jaas.config", JAAS, "listener.name.b.plain.sasl.jaas.config", JAAS,
            "listener.name.c.plain.sasl.jaas.config", JAAS,
            "listener.name.a.scram-sha-256.connections.max.reauth.ms", "1500", // the mechanism's, on its listener
            "listener.name.b.connections.max.reauth.ms", "0"); // the listener's: off for both of its mechanisms
        final List<Endpoint> listeners = ListenerSecurity.brokerListeners(config);
        assertEquals(Map.of("PLAIN", 60_000L, "SCRAM-SHA-256", 1_500L), ListenerSecurity.reauthMs(config, listeners.get(0)));
        assertEquals(Map.of(), ListenerSecurity.reauthMs(config, listeners.get(1)));
        assertEquals(Map.of("PLAIN", 60_000L, "SCRAM-SHA-256", 60_000L), ListenerSecurity.reauthMs(config, listeners.get(2)));
        final BrokerConfig byDefault = config("listeners", "SASL_PLAINTEXT://:9094", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS);
        assertEquals(Map.of(), ListenerSecurity.reauthMs(byDefault, ListenerSecurity.brokerListeners(byDefault).get(0)),
            "Kafka's default 0: no re-authentication");
        assertTrue(refused("listeners", "SASL_PLAINTEXT://:9094", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS, "listener.name.sasl_plaintext.plain.connections.max.reauth.ms", "soon")
            .contains("listener.name.sasl_plaintext.plain.connections.max.reauth.ms"));
    }

    @Test
    void theDefaultIsOnePlaintextListenerOnLoopback9092()
    {
        assertEquals(List.of(new Endpoint("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092)), ListenerSecurity.brokerListeners(config()));
    }

    @Test
    void severalListenersTheirProtocolsAndWhatEachAdvertises()
    {
        final BrokerConfig config = config("listeners", "PLAINTEXT://:9092,sasl_plaintext://127.0.0.1:9094,INTERNAL://[::1]:9095",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
            "advertised.listeners", "SASL_PLAINTEXT://public.example:19094",
            "sasl.enabled.mechanisms", "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS);
        assertEquals(List.of(new Endpoint("PLAINTEXT", "PLAINTEXT", "", 9092), new Endpoint("SASL_PLAINTEXT", "SASL_PLAINTEXT", "127.0.0.1", 9094),
            new Endpoint("INTERNAL", "PLAINTEXT", "::1", 9095)), ListenerSecurity.brokerListeners(config));
        final Map<String, Endpoint> advertised = ListenerSecurity.advertised(config);
        assertEquals("public.example", advertised.get("SASL_PLAINTEXT").host());
        assertEquals(19094, advertised.get("SASL_PLAINTEXT").port());
        assertEquals(9092, advertised.get("PLAINTEXT").port(), "a listener not in advertised.listeners advertises its own");
        final Endpoint sasl = ListenerSecurity.brokerListeners(config).get(1);
        assertEquals(Map.of("alice", "alice-secret", "bob", "b0b"), ListenerSecurity.plainUsers(config, sasl));
        assertEquals(List.of("PLAIN"), ListenerSecurity.mechanisms(config, sasl));
    }

    @Test
    void kafkasMessagesForWhatItRefuses()
    {
        assertTrue(refused("listeners", "PLAINTEXT://:9092,PLAINTEXT://:9093").contains(
            "Each listener must have a different name, listeners: PLAINTEXT://:9092,PLAINTEXT://:9093"));
        assertTrue(refused("listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9092").contains(
            "Each listener must have a different port, listeners: PLAINTEXT://:9092,SASL_PLAINTEXT://:9092"));
        assertTrue(refused("listeners", "INTERNAL://:9092").contains("No security protocol defined for listener INTERNAL"));
        assertTrue(refused("listeners", "PLAINTEXT://nowhere").contains("Unable to parse PLAINTEXT://nowhere to a broker endpoint"));
        assertTrue(refused("listeners", "PLAINTEXT://:9092", "advertised.listeners", "OTHER://h:1",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT").contains(
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found OTHER."));
        assertTrue(refused("listener.security.protocol.map", "PLAINTEXT:TLS").contains("listener.security.protocol.map"));
    }

    @Test
    void tlsListenersWithoutAKeyStoreAndOtherMechanismsAreRefusedNeverServedAsPlaintext()
    {
        assertTrue(refused("listeners", "SSL://:9093").contains("listener SSL (SSL) needs a key store"));
        assertTrue(refused("listeners", "SSL://:9093", "ssl.keystore.location", "/nowhere/ks.p12").contains(
            "SSL key store is specified, but key store password is not specified."));
        assertTrue(refused("listeners", "SSL://:9093", "ssl.keystore.location", "/nowhere/ks.p12", "ssl.keystore.password", "pw",
            "ssl.keystore.type", "PKCS12").contains("ssl.keystore.location"));
        assertTrue(refused("listeners", "SASL_SSL://:9093", "sasl.enabled.mechanisms", "SCRAM-SHA-512").contains(
            "listener SASL_SSL (SASL_SSL) needs a key store"));
        // Kafka's default mechanism is GSSAPI: a SASL listener without sasl.enabled.mechanisms is refused, as not served
        assertTrue(refused("listeners", "SASL_PLAINTEXT://:9093").contains("SASL mechanism GSSAPI (listener SASL_PLAINTEXT) is not supported"));
        assertTrue(refused("listeners", "SASL_PLAINTEXT://:9093", "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "OAUTHBEARER",
            "sasl.enabled.mechanisms", "PLAIN").contains("SASL mechanism OAUTHBEARER (listener SASL_PLAINTEXT) is not supported"));
        assertTrue(refused("listeners", "SASL_PLAINTEXT://:9093", "sasl.enabled.mechanisms", "PLAIN").contains(
            "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration"));
    }

    @Test
    void scramMechanismsNeedNoJaasTextAndTheirJaasNamesAreKnown()
    {
        final BrokerConfig config = config("listeners", "SASL_PLAINTEXT://:9093", "sasl.enabled.mechanisms", "SCRAM-SHA-256",
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "SCRAM-SHA-512,SCRAM-SHA-256",
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        final Endpoint sasl = ListenerSecurity.brokerListeners(config).get(0);
        assertEquals(List.of("SCRAM-SHA-512", "SCRAM-SHA-256"), ListenerSecurity.mechanisms(config, sasl), "the listener's own, in its order");
        assertEquals(Map.of(), ListenerSecurity.plainUsers(config, sasl), "no PLAIN: no JAAS users needed");
        assertEquals(List.of(), config.unknownNames());
        // with PLAIN beside SCRAM, PLAIN's JAAS text is still needed
        assertTrue(refused("listeners", "SASL_PLAINTEXT://:9093", "sasl.enabled.mechanisms", "SCRAM-SHA-256,PLAIN").contains(
            "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration"));
    }

    @Test
    void aBadJaasTextIsNamedNeverShown()
    {
        final String message = refused("listeners", "SASL_PLAINTEXT://:9093", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config",
            "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"top-secret\"");
        assertTrue(message.contains("listener.name.sasl_plaintext.plain.sasl.jaas.config"), message);
        assertFalse(message.contains("top-secret"), message);
        final String other = refused("listeners", "SASL_PLAINTEXT://:9093", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", "com.example.Other required;");
        assertTrue(other.contains("must be " + PlainJaas.PLAIN_LOGIN_MODULE), other);
        assertFalse(other.contains("com.example.Other"), other);
    }

    @Test
    void aJaasMistakeNeverEchoesAPassword()
    {
        // user_alice= left out: the token where an option name was expected is the password
        for (final String jaas : new String[] {PlainJaas.PLAIN_LOGIN_MODULE + " required alice-secret;",
            PlainJaas.PLAIN_LOGIN_MODULE + " required user_bob=\"b\" alice-secret user_carol=\"c\";",
            PlainJaas.PLAIN_LOGIN_MODULE + " alice-secret user_alice=x;", "alice-secret required user_alice=x;"})
        {
            final String message = refused("listeners", "SASL_PLAINTEXT://:9093", "sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas);
            assertTrue(message.contains("listener.name.sasl_plaintext.plain.sasl.jaas.config at character"), message);
            assertFalse(message.contains("alice-secret"), message);
        }
    }

    @Test
    void thePerListenerSettingsFerriteReadsAreKnownNames()
    {
        final BrokerConfig config = config("listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9094", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS, "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.ssl.keystore.location", "/k", "listener.name.other.sasl.enabled.mechanisms", "PLAIN");
        assertEquals(List.of("listener.name.other.sasl.enabled.mechanisms", "listener.name.sasl_plaintext.ssl.keystore.location"),
            config.unknownNames().stream().sorted().toList(), "only what Ferrite does not read (or no listener of that name has)");
    }

    @Test
    void kafkasSampleAdvertisedListenersWithTheControllerListenerIsAccepted()
    {
        // Kafka 4.4's config/server.properties (KIP-853: advertised.listeners may name controller listeners)
        final BrokerConfig config = config("process.roles", "broker,controller", "node.id", "1", "controller.listener.names", "CONTROLLER",
            "listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            "advertised.listeners", "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093");
        final Map<String, Endpoint> advertised = ListenerSecurity.advertised(config);
        assertEquals(List.of("PLAINTEXT"), List.copyOf(advertised.keySet()), "a controller listener is not the broker's");
        assertEquals("localhost", advertised.get("PLAINTEXT").host());
        final String message = refused("process.roles", "broker,controller", "node.id", "1", "controller.listener.names", "CONTROLLER",
            "listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", "advertised.listeners", "PLAINTEXT://h:9092,OTHER://h:1",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,OTHER:PLAINTEXT");
        assertTrue(message.contains("Found OTHER. The valid options based on currently configured listeners are PLAINTEXT,CONTROLLER"), message);
    }

    @Test
    void controllerListenersAreNotTheBrokersAndMapToPlaintextByDefault()
    {
        final BrokerConfig config = config("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            "controller.listener.names", "CONTROLLER");
        assertEquals(List.of(new Endpoint("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092)), ListenerSecurity.brokerListeners(config));
        assertTrue(refused("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", "controller.listener.names", "CONTROLLER",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT").contains("No security protocol defined for listener CONTROLLER"));
    }
}
