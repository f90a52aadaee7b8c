package io.ferrite.codegen;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Loads Kafka's message schemas ({@code common/message/*.json}, JSON with {@code //} comments) into
 * {@link MessageSpec}s. The schemas ship inside the kafka-clients jar; nothing of them is copied
 * into this repository.
 */
public final class SchemaLoader
{
    public static final String SCHEMA_DIR = "common/message/";

    private final ObjectMapper mapper = new ObjectMapper().enable(JsonParser.Feature.ALLOW_COMMENTS);

    /** Every schema of kafka-clients (found on the class path under {@code common/message/}), sorted by name. */
    public static List<MessageSpec> loadFromClasspath()
    {
        return loadFromJarOf("RequestHeader.json", "kafka-clients");
    }

    /**
     * Every schema under {@code common/message/} in the jar (or directory) on the class path that holds
     * {@code markerSchema}, sorted by name: several jars have that directory (kafka-clients, the group and
     * transaction coordinators), the marker picks one. {@code jarName} names it in the error when it is missing.
     */
    public static List<MessageSpec> loadFromJarOf(final String markerSchema, final String jarName)
    {
        final ClassLoader loader = SchemaLoader.class.getClassLoader();
        final URL marker = loader.getResource(SCHEMA_DIR + markerSchema);
        if (marker == null)
        {
            throw new IllegalStateException(jarName + " (with " + SCHEMA_DIR + markerSchema + ") is not on the class path");
        }
        final Map<String, String> texts = new TreeMap<>();
        try
        {
            if ("jar".equals(marker.getProtocol()))
            {
                final String spec = marker.getPath();
                final String jarPath = spec.substring("file:".length(), spec.indexOf("!/"));
                try (JarFile jar = new JarFile(java.net.URLDecoder.decode(jarPath, "UTF-8")))
                {
                    final Enumeration<JarEntry> entries = jar.entries();
                    while (entries.hasMoreElements())
                    {
                        final JarEntry e = entries.nextElement();
                        final String n = e.getName();
                        if (n.startsWith(SCHEMA_DIR) && n.endsWith(".json") && n.indexOf('/', SCHEMA_DIR.length()) < 0)
                        {
                            try (InputStream in = jar.getInputStream(e))
                            {
                                texts.put(n.substring(SCHEMA_DIR.length()), new String(in.readAllBytes(), "UTF-8"));
                            }
                        }
                    }
                }
            }
            else
            {
                final Path dir = Path.of(marker.toURI()).getParent();
                try (Stream<Path> files = Files.list(dir))
                {
                    for (final Path p : (Iterable<Path>)files::iterator)
                    {
                        if (p.getFileName().toString().endsWith(".json"))
                        {
                            texts.put(p.getFileName().toString(), Files.readString(p));
                        }
                    }
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final URISyntaxException ex)
        {
            throw new IllegalStateException(ex);
        }

        final SchemaLoader schemaLoader = new SchemaLoader();
        final List<MessageSpec> specs = new ArrayList<>();
        for (final Map.Entry<String, String> e : texts.entrySet())
        {
            final MessageSpec spec = schemaLoader.parse(e.getKey(), e.getValue());
            if (spec != null)
            {
                specs.add(spec);
            }
        }
        return specs;
    }

    /**
     * Parses one schema; returns null for the schemas of APIs Kafka has removed (they keep only
     * their key and an empty version range, without fields).
     */
    public MessageSpec parse(final String fileName, final String text)
    {
        final JsonNode root;
        try
        {
            root = mapper.readTree(text);
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException(fileName + ": " + ex.getMessage(), ex);
        }
        if (!root.has("fields"))
        {
            return null;
        }
        final String name = root.get("name").asText();
        final String type = root.get("type").asText();
        final int apiKey = root.has("apiKey") ? root.get("apiKey").asInt() : -1;
        final Versions valid = Versions.parse(root.get("validVersions").asText(), null);
        final Versions flexible = Versions.parse(text(root, "flexibleVersions"), Versions.NONE);

        final Map<String, StructSpec> structs = new LinkedHashMap<>();
        final Map<String, JsonNode> commonNodes = new LinkedHashMap<>();
        if (root.has("commonStructs"))
        {
            for (final JsonNode c : root.get("commonStructs"))
            {
                commonNodes.put(c.get("name").asText(), c);
            }
        }
        // parse the common structs first (they may be referenced from anywhere), then the tree
        final Map<String, Versions> possible = new HashMap<>();
        for (final Map.Entry<String, JsonNode> c : commonNodes.entrySet())
        {
            structs.put(c.getKey(), new StructSpec(c.getKey(), fields(fileName, c.getValue().get("fields"), structs), valid));
        }
        final List<FieldSpec> rootFields = fields(fileName, root.get("fields"), structs);
        final StructSpec rootStruct = new StructSpec(name, rootFields, valid);

        // narrow each struct's possible versions to those in which a field holding it can be present
        narrow(rootStruct, valid, flexible, structs, possible);
        final Map<String, StructSpec> narrowed = new LinkedHashMap<>();
        for (final StructSpec s : structs.values())
        {
            narrowed.put(s.name(), s.withPossible(possible.getOrDefault(s.name(), Versions.NONE)));
        }
        if (narrowed.containsKey(name))
        {
            throw new IllegalArgumentException(fileName + ": a struct is named like the message");
        }
        return new MessageSpec(name, type, apiKey, valid, flexible,
            root.path("latestVersionUnstable").asBoolean(false), rootStruct, narrowed);
    }

    private static void narrow(
        final StructSpec struct,
        final Versions within,
        final Versions flexible,
        final Map<String, StructSpec> structs,
        final Map<String, Versions> possible)
    {
        for (final FieldSpec f : struct.fields())
        {
            final FieldType t = f.type().isArray() ? f.type().element() : f.type();
            if (t.isStruct())
            {
                final Versions in = f.presentIn(within, flexible);
                if (in.isEmpty())
                {
                    continue;
                }
                final Versions before = possible.get(t.structName());
                final Versions hull = before == null ? in : new Versions(
                    (short)Math.min(before.lowest(), in.lowest()), (short)Math.max(before.highest(), in.highest()));
                if (!hull.equals(before))
                {
                    possible.put(t.structName(), hull);
                    narrow(structs.get(t.structName()), hull, flexible, structs, possible);
                }
            }
        }
    }

    private List<FieldSpec> fields(final String fileName, final JsonNode array, final Map<String, StructSpec> structs)
    {
        final List<FieldSpec> result = new ArrayList<>();
        for (final JsonNode f : array)
        {
            final String fieldName = f.get("name").asText();
            final FieldType type = FieldType.parse(f.get("type").asText());
            // a tagged field may leave out "versions": it is present in its tagged versions (StreamsGroupMetadataValue's)
            final Versions versions = Versions.parse(text(f, f.has("versions") ? "versions" : "taggedVersions"), null);
            if (versions == null)
            {
                throw new IllegalArgumentException(fileName + ": field " + fieldName + " has no versions");
            }
            final Versions nullable = Versions.parse(text(f, "nullableVersions"), Versions.NONE);
            final Versions tagged = Versions.parse(text(f, "taggedVersions"), null);
            int tag = -1;
            if (tagged != null)
            {
                if (!tagged.equals(versions))
                {
                    throw new IllegalArgumentException(
                        fileName + ": field " + fieldName + " is tagged in only some of its versions; not supported");
                }
                tag = f.get("tag").asInt();
            }
            StructSpec inline = null;
            if (f.has("fields"))
            {
                final FieldType st = type.isArray() ? type.element() : type;
                if (!st.isStruct())
                {
                    throw new IllegalArgumentException(fileName + ": field " + fieldName + " has fields but no struct type");
                }
                inline = new StructSpec(st.structName(), fields(fileName, f.get("fields"), structs), Versions.ALL);
                if (structs.put(st.structName(), inline) != null)
                {
                    throw new IllegalArgumentException(fileName + ": struct " + st.structName() + " defined twice");
                }
            }
            final FieldSpec spec = new FieldSpec(
                fieldName, type, versions, nullable, tag, text(f, "default"),
                f.path("ignorable").asBoolean(false),
                Versions.parse(text(f, "flexibleVersions"), null),
                inline,
                text(f, "about"));
            validate(fileName, spec);
            result.add(spec);
        }
        return result;
    }

    private static void validate(final String fileName, final FieldSpec f)
    {
        final FieldType.Kind k = f.type().kind();
        if (k == FieldType.Kind.STRING && f.defaultValue() != null &&
            !f.defaultValue().isEmpty() && !f.defaultIsNull())
        {
            throw new IllegalArgumentException(fileName + ": string default other than \"\" or null: " + f.name());
        }
        if (f.defaultIsNull() && !f.nullable().containsAll(f.versions()))
        {
            throw new IllegalArgumentException(fileName + ": default null but not nullable in every version: " + f.name());
        }
        if (k.isFixed() && k != FieldType.Kind.UUID)
        {
            f.defaultLiteral(); // parses and range-checks
        }
    }

    private static String text(final JsonNode node, final String field)
    {
        final JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}
