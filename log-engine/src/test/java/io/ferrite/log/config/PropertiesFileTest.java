package io.ferrite.log.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

class PropertiesFileTest
{
    @TempDir
    Path dir;

    private Map<String, String> roundTrip(final Map<String, String> values) throws IOException
    {
        final Path file = dir.resolve("x.properties");
        PropertiesFile.write(file, values, "a comment");
        assertFalse(Files.exists(dir.resolve("x.properties.tmp")));
        final Properties loaded = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            loaded.load(reader);
        }
        final Map<String, String> out = new HashMap<>();
        loaded.stringPropertyNames().forEach(n -> out.put(n, loaded.getProperty(n)));
        return out;
    }

    @Test
    void plainValuesAreWrittenAsPropertiesStoreWritesThem() throws IOException
    {
        final Path file = dir.resolve("meta.properties");
        PropertiesFile.write(file, Map.of("version", "1", "node.id", "7", "cluster.id", "AbC-d_9"), null);
        assertEquals("cluster.id=AbC-d_9\nnode.id=7\nversion=1\n", Files.readString(file));
    }

    @Test
    void whatPropertiesLoadReadsBackIsWhatWasWritten() throws IOException
    {
        assertEquals(Map.of(), roundTrip(Map.of()));
        final Map<String, String> tricky = Map.of(" lead space", " value with  spaces ", "a=b:c", "x=y:z#!\\", "tab\tkey",
            "line\nbreak\r\f", "#comment-like", "!bang", "unicode é€", "Ω value ✓", "empty", "", "trailing\\", "back\\slash\\");
        assertEquals(tricky, roundTrip(tricky));
        final Random random = new Random(42);
        for (int round = 0; round < 200; round++)
        {
            final Map<String, String> values = new HashMap<>();
            for (int i = 0; i < 5; i++)
            {
                values.put(randomString(random) + i, randomString(random));
            }
            assertEquals(values, roundTrip(values));
        }
    }

    private static String randomString(final Random random)
    {
        final String alphabet = " \t\n\r\f=:#!\\aZ09.-_é€\u0001\u007f";
        final StringBuilder s = new StringBuilder();
        for (int i = random.nextInt(8); i > 0; i--)
        {
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return s.toString();
    }
}
