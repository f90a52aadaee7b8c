package io.ferrite.broker.config;

import io.ferrite.log.LogConfig;
import io.ferrite.log.config.ConfigKey;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code docs/configuration.md} is what the catalogues say: every setting the code knows, with its
 * default and valid values, so that the document and the start-up refusal of unknown
 * {@code ferrite.} names cannot drift apart. The tables are written by {@link ConfigDoc}; when a
 * setting is added, run the command in the failure message.
 */
class ConfigDocTest
{
    /** The repository root: surefire runs in the module's directory. */
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path DOC = ROOT.resolve(UnknownNames.DOC);
    private static final String REGENERATE = "docs/configuration.md is out of date with the config catalogues; run "
        + "`mvn -B -q -pl broker -am package -DskipTests && java -cp broker/target/ferrite-broker.jar "
        + "io.ferrite.broker.config.ConfigDoc docs/configuration.md` in the repository root";

    private static String doc() throws IOException
    {
        return Files.readString(DOC, StandardCharsets.UTF_8);
    }

    @Test
    void everyFerriteSettingIsDocumented() throws IOException
    {
        final String doc = doc();
        final List<String> missing = new ArrayList<>();
        final List<ConfigKey> keys = new ArrayList<>(BrokerConfig.CATALOGUE.keys());
        keys.addAll(LogConfig.CATALOGUE.keys());
        for (final ConfigKey key : keys)
        {
            if (key.name().startsWith(UnknownNames.FERRITE_PREFIX) && !doc.contains("| `" + key.name() + "` |"))
            {
                missing.add(key.name());
            }
        }
        assertTrue(missing.isEmpty(), "ferrite settings without a row in " + DOC + ": " + missing + "; " + REGENERATE);
    }

    @Test
    void tablesAreTheCataloguesAsTheyStand() throws IOException
    {
        final String doc = doc();
        assertEquals(ConfigDoc.render(doc), doc, REGENERATE);
    }

    @Test
    void readmesLinkToIt() throws IOException
    {
        assertTrue(Files.readString(ROOT.resolve("README.md")).contains("](docs/configuration.md)"), "README.md links to the doc");
        assertTrue(Files.readString(ROOT.resolve("broker/README.md")).contains("](/docs/configuration.md)"),
            "broker/README.md links to the doc");
    }
}
