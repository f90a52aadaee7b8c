package io.ferrite.client;

import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code enable.idempotence} against acks, retries and max.in.flight.requests.per.connection, each combination
 * resolved by this client's {@link ProducerConfig} and by kafka-clients' own {@code ProducerConfig}: the same
 * outcome (idempotent, not idempotent, or a ConfigException with the same message).
 */
class IdempotenceConfigTest
{
    static Stream<Arguments> combinations()
    {
        final List<Arguments> all = new ArrayList<>();
        for (final Boolean idempotence : new Boolean[] {null, true, false})
        {
            for (final int acks : new int[] {0, 1, -1})
            {
                for (final int retries : new int[] {0, 3})
                {
                    for (final int inFlight : new int[] {1, 5, 6})
                    {
                        all.add(Arguments.of(idempotence, acks, retries, inFlight));
                    }
                }
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "enable.idempotence={0} acks={1} retries={2} max.in.flight={3}")
    @MethodSource("combinations")
    void sameOutcomeAsKafkaClients(final Boolean idempotence, final int acks, final int retries, final int inFlight)
    {
        assertEquals(kafkaClients(idempotence, acks, retries, inFlight), ferrite(idempotence, acks, retries, inFlight));
    }

    private static String ferrite(final Boolean idempotence, final int acks, final int retries, final int inFlight)
    {
        final ProducerConfig config = new ProducerConfig().bootstrapServers("127.0.0.1:9").acks(acks).retries(retries)
            .maxInFlightRequestsPerConnection(inFlight);
        if (idempotence != null)
        {
            config.enableIdempotence(idempotence);
        }
        try
        {
            return "idempotent=" + config.idempotent();
        }
        catch (final ConfigException ex)
        {
            return "ConfigException: " + ex.getMessage();
        }
    }

    private static String kafkaClients(final Boolean idempotence, final int acks, final int retries, final int inFlight)
    {
        final Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", "127.0.0.1:9");
        props.put("key.serializer", ByteArraySerializer.class);
        props.put("value.serializer", ByteArraySerializer.class);
        props.put("acks", Integer.toString(acks));
        props.put("retries", retries);
        props.put("max.in.flight.requests.per.connection", inFlight);
        if (idempotence != null)
        {
            props.put("enable.idempotence", idempotence);
        }
        try
        {
            final org.apache.kafka.clients.producer.ProducerConfig config = new org.apache.kafka.clients.producer.ProducerConfig(props);
            return "idempotent=" + config.getBoolean("enable.idempotence");
        }
        catch (final org.apache.kafka.common.config.ConfigException ex)
        {
            return "ConfigException: " + ex.getMessage();
        }
    }
}
