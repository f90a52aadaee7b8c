package io.ferrite.wire.message;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Our API table and header-version rules agree with kafka-clients' for every API and version. */
class ApiKeysTest
{
    @Test
    void everyKafkaApiIsKnownWithTheSameVersionsAndHeaders()
    {
        int checked = 0;
        int apis = 0;
        for (final org.apache.kafka.common.protocol.ApiKeys kafka : org.apache.kafka.common.protocol.ApiKeys.values())
        {
            final ApiKeys ours = ApiKeys.forId(kafka.id);
            if (!kafka.hasValidVersion())
            {
                // removed from Kafka (LeaderAndIsr, StopReplica, ...): its schema keeps no fields
                assertNull(ours, kafka.name);
                continue;
            }
            apis++;
            assertNotNull(ours, kafka.name);
            assertEquals(kafka.oldestVersion(), ours.lowestVersion, kafka.name);
            assertEquals(kafka.latestVersion(true), ours.highestVersion, kafka.name);
            assertEquals(kafka.messageType.latestVersionUnstable(), ours.latestVersionUnstable, kafka.name);
            for (short v = ours.lowestVersion; v <= ours.highestVersion; v++)
            {
                assertEquals(kafka.requestHeaderVersion(v), ours.requestHeaderVersion(v), kafka.name + " v" + v);
                assertEquals(kafka.responseHeaderVersion(v), ours.responseHeaderVersion(v), kafka.name + " v" + v);
                checked++;
            }
        }
        assertEquals(apis, ApiKeys.values().length);
        assertNull(ApiKeys.forId(-1));
        assertNull(ApiKeys.forId(30_000));
        assertEquals(true, checked > 300);
    }
}
