package io.ferrite.broker.quota;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Which quota applies to a (user, client id) and which clients share its rate: Kafka 4.4's default quota callback
 * (ClientQuotaManager's DefaultQuotaCallback, read from its source and bytecode), its eight levels in order. Each level
 * is checked by adding the levels from the least specific up: the new one must win, with the tags Kafka gives it.
 */
class QuotaLevelsTest
{
    private static final String KEY = QuotaKeys.PRODUCER_BYTE_RATE;

    /** The eight levels, least specific first, each with the tags Kafka shares its rate under for alice / c1. */
    private static final Object[][] LEVELS = {
        {QuotaEntity.clientId(null), "", "c1"},                  // 8 /config/clients/<default>
        {QuotaEntity.clientId("c1"), "", "c1"},                  // 7 /config/clients/c1
        {QuotaEntity.user(null), "alice", ""},                   // 6 /config/users/<default>
        {QuotaEntity.userAndClientId(null, null), "alice", "c1"}, // 5 /config/users/<default>/clients/<default>
        {QuotaEntity.userAndClientId(null, "c1"), "alice", "c1"}, // 4 /config/users/<default>/clients/c1
        {QuotaEntity.user("alice"), "alice", ""},                // 3 /config/users/alice
        {QuotaEntity.userAndClientId("alice", null), "alice", "c1"}, // 2 /config/users/alice/clients/<default>
        {QuotaEntity.userAndClientId("alice", "c1"), "alice", "c1"}, // 1 /config/users/alice/clients/c1
    };

    @Test
    void theMostSpecificOfTheEightLevelsApplies()
    {
        final Map<QuotaEntity, Map<String, Double>> quotas = new LinkedHashMap<>();
        for (int level = 0; level < LEVELS.length; level++)
        {
            quotas.put((QuotaEntity)LEVELS[level][0], Map.of(KEY, 1000.0 + level));
            final QuotaLevels levels = QuotaLevels.of(quotas, KEY);
            final QuotaLevels.Tags tags = levels.tags("alice", "c1");
            assertEquals(new QuotaLevels.Tags((String)LEVELS[level][1], (String)LEVELS[level][2]), tags, "level " + (8 - level));
            assertEquals(1000.0 + level, levels.bound(tags), "level " + (8 - level));
        }
    }

    @Test
    void eachLevelAloneAppliesToItsClientsOnly()
    {
        for (final Object[] level : LEVELS)
        {
            final QuotaEntity entity = (QuotaEntity)level[0];
            final QuotaLevels levels = QuotaLevels.of(Map.of(entity, Map.of(KEY, 500.0)), KEY);
            assertEquals(500.0, levels.bound(levels.tags("alice", "c1")), entity.kafkaString());
            // bob with c2 is under a default level only
            final boolean defaultsOnly = (!entity.hasUser() || entity.user() == null) && (!entity.hasClientId() || entity.clientId() == null);
            final Double bob = levels.bound(levels.tags("bob", "c2"));
            if (defaultsOnly)
            {
                assertEquals(500.0, bob, entity.kafkaString());
            }
            else
            {
                assertNull(bob, entity.kafkaString());
            }
        }
    }

    @Test
    void aUserQuotaIsSharedByItsClientIdsAndAClientIdQuotaByItsUsers()
    {
        final QuotaLevels byUser = QuotaLevels.of(Map.of(QuotaEntity.user("alice"), Map.of(KEY, 100.0)), KEY);
        assertEquals(byUser.tags("alice", "c1"), byUser.tags("alice", "c2"));
        final QuotaLevels byClient = QuotaLevels.of(Map.of(QuotaEntity.clientId("c1"), Map.of(KEY, 100.0)), KEY);
        assertEquals(byClient.tags("alice", "c1"), byClient.tags("bob", "c1"));
        final QuotaLevels byDefaultClient = QuotaLevels.of(Map.of(QuotaEntity.userAndClientId("alice", null), Map.of(KEY, 100.0)), KEY);
        assertEquals(new QuotaLevels.Tags("alice", "c2"), byDefaultClient.tags("alice", "c2"), "each client id its own rate");
    }

    @Test
    void anotherKeysQuotaOrAnIpQuotaIsNone()
    {
        final Map<QuotaEntity, Map<String, Double>> quotas = Map.of(QuotaEntity.user(null), Map.of(QuotaKeys.CONSUMER_BYTE_RATE, 10.0),
            QuotaEntity.ip(null), Map.of(QuotaKeys.CONNECTION_CREATION_RATE, 10.0));
        assertEquals(false, QuotaLevels.of(quotas, KEY).any());
        assertEquals(true, QuotaLevels.of(quotas, QuotaKeys.CONSUMER_BYTE_RATE).any());
    }
}
