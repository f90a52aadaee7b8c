package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The authorizer's settings as a start reads them: an authorizer on a cluster node is refused, naming both settings. */
class AuthorizerSettingsTest
{
    private static final String STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

    @Test
    void anAuthorizerOnAClusterNodeIsRefusedNamingBothSettings()
    {
        for (final String cluster : new String[] {"process.roles", "controller.quorum.voters"})
        {
            final String value = "process.roles".equals(cluster) ? "broker,controller" : "1@127.0.0.1:19093";
            final String message = assertThrows(ConfigException.class, () -> BrokerConfig.of(Map.of(
                AuthorizerSettings.AUTHORIZER_CLASS_NAME, STANDARD, cluster, value))).getMessage();
            assertTrue(message.contains("authorizer.class.name") && message.contains(cluster)
                && message.contains("cluster mode"), message);
        }
    }

    @Test
    void aSingleNodeKeepsItsAuthorizerAndAClusterNodeWithoutOneStarts()
    {
        assertTrue(AuthorizerSettings.authorizer(BrokerConfig.of(Map.of(AuthorizerSettings.AUTHORIZER_CLASS_NAME, STANDARD))).enabled());
        final BrokerConfig cluster = BrokerConfig.of(Map.of("process.roles", "broker,controller",
            "controller.quorum.voters", "1@127.0.0.1:19093", AuthorizerSettings.AUTHORIZER_CLASS_NAME, ""));
        assertEquals("", cluster.getString(AuthorizerSettings.AUTHORIZER_CLASS_NAME));
    }
}
