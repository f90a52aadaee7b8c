package io.ferrite.client;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code group.instance.id} checked as kafka-clients 4.4's {@code JoinGroupRequest.validateGroupInstanceId}
 * ({@code Topic.validate}: not empty, not "." or "..", at most 249 characters of ASCII alphanumerics, '.', '_', '-').
 */
class GroupInstanceIdConfigTest
{
    @Test
    void legalIdsAreKept()
    {
        assertEquals("a.b_c-9", new ConsumerConfig().groupInstanceId("a.b_c-9").groupInstanceId);
        assertEquals(249, new ConsumerConfig().groupInstanceId("x".repeat(249)).groupInstanceId.length());
        assertEquals("...", new ConsumerConfig().groupInstanceId("...").groupInstanceId);
        assertNull(new ConsumerConfig().groupInstanceId(null).groupInstanceId, "null: a dynamic member");
    }

    @Test
    void illegalIdsAreRejected()
    {
        for (final String id : new String[] {"", ".", "..", "x".repeat(250), "a/b", "a b", "é"})
        {
            assertThrows(ConfigException.class, () -> new ConsumerConfig().groupInstanceId(id), () -> "\"" + id + "\"");
        }
    }
}
