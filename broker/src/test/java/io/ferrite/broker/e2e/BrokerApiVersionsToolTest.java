package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kafka-broker-api-versions.sh} (BrokerApiVersionsCommand, in a child JVM) against Ferrite prints what it
 * prints against a Kafka 4.4 single node ({@code kafka-4.4-broker-api-versions.txt}, that node's output after its
 * first line, taken with {@code /work/shared/kafka-ref}): the same APIs in the same order, each API Ferrite advertises
 * with Kafka's version range, and each it lacks as "UNSUPPORTED", as the tool prints an API a node does not advertise.
 */
class BrokerApiVersionsToolTest
{
    private static final Pattern API_LINE = Pattern.compile("\t(\\w+)\\((\\d+)\\): .*?(,?)");

    @TempDir
    Path dir;

    @Test
    void printsKafkasLinesWithUnsupportedForWhatFerriteLacks() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final Set<Integer> advertised = new HashSet<>();
            for (final ApiVersionsResponseData.ApiVersion v : raw.apiVersions().apiKeys())
            {
                advertised.add((int)v.apiKey());
            }
            final List<String> expected = new ArrayList<>();
            expected.add(broker.bootstrap() + " (id: 1 rack: null isFenced: false) -> (");
            int unsupported = 0;
            for (final String kafkaLine : kafkaOutput())
            {
                final Matcher m = API_LINE.matcher(kafkaLine);
                if (!m.matches())
                {
                    expected.add(kafkaLine);
                    continue;
                }
                final boolean has = advertised.remove(Integer.parseInt(m.group(2)));
                unsupported += has ? 0 : 1;
                expected.add(has ? kafkaLine : "\t" + m.group(1) + "(" + m.group(2) + "): UNSUPPORTED" + m.group(3));
            }
            assertTrue(advertised.isEmpty(), "advertised by Ferrite, not by Kafka 4.4: " + advertised);
            assertTrue(unsupported > 10, "APIs Ferrite lacks: " + unsupported);
            final KafkaTool.Run run = KafkaTool.run(90, null, "org.apache.kafka.tools.BrokerApiVersionsCommand",
                "--bootstrap-server", broker.bootstrap());
            assertEquals(0, run.status(), run.toString());
            assertEquals(expected, run.lines(), run.toString());
        }
    }

    private static List<String> kafkaOutput() throws Exception
    {
        try (InputStream in = BrokerApiVersionsToolTest.class.getResourceAsStream("/kafka-4.4-broker-api-versions.txt"))
        {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }
}
