package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The refusal of unknown {@code ferrite.} names holds for an embedded broker too, not only for the command. */
class UnknownNamesTest
{
    @Test
    void embeddedConfigurationRefusesUnknownFerriteNames()
    {
        final ConfigException topicName = assertThrows(ConfigException.class, () -> BrokerConfig.of(Map.of("ferrite.durability", "fsync")));
        assertTrue(topicName.getMessage().contains("ferrite.log.durability"), topicName.getMessage());
        final ConfigException typo = assertThrows(ConfigException.class, () -> BrokerConfig.of(Map.of("ferrite.idle.strategie", "park")));
        assertTrue(typo.getMessage().contains("did you mean ferrite.idle.strategy?"), typo.getMessage());
    }

    @Test
    void otherUnknownNamesAreOnlyReported()
    {
        final BrokerConfig config = BrokerConfig.of(Map.of("num.io.threads", "8", "ferrite.log.durability", "fsync"));
        assertEquals(List.of("num.io.threads"), config.unknownNames());
        assertEquals("fsync", config.topicDefaults().get("ferrite.durability"));
        // a topic config named at broker level, as Kafka's cleanup.policy: warned with the broker name
        assertTrue(UnknownNames.hint("cleanup.policy").contains("log.cleanup.policy"));
    }

    @Test
    void suggestionsStayWithinATyposReach()
    {
        assertEquals("ferrite.log.threads", UnknownNames.closest("ferrite.log.thread"));
        assertEquals("ferrite.log.write.strategy", UnknownNames.closest("ferrite.log.writestrategy"));
        assertNull(UnknownNames.closest("ferrite.something.else.entirely"));
        assertEquals(3, UnknownNames.distance("kitten", "sitting", 10));
        assertEquals(2, UnknownNames.distance("kitten", "sitting", 2), "stops at the limit");
    }
}
