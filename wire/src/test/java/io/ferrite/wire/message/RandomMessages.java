package io.ferrite.wire.message;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.codegen.FieldSpec;
import io.ferrite.codegen.FieldType;
import io.ferrite.codegen.MessageSpec;
import io.ferrite.codegen.StructSpec;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Random;

/**
 * Random messages in the JSON form of Kafka's {@code *JsonConverter}s, generated from the schema:
 * every field the version has, nulls where it allows them, tagged fields sent or not (and, when
 * sent, never at their default, because Kafka does not send those). The same JSON goes into
 * kafka-clients (through its converter) and into our encoder (through the generated bridge).
 */
final class RandomMessages
{
    static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String ALPHABET = "abcXYZ019-_.é中\uD83D\uDE00";

    private final MessageSpec spec;
    private final Random random;

    RandomMessages(final MessageSpec spec, final long seed)
    {
        this.spec = spec;
        this.random = new Random(seed);
    }

    ObjectNode message(final short v)
    {
        return struct(spec.root(), v, 0);
    }

    /** The JSON our bridge and Kafka produce for a struct whose every field is at its default. */
    ObjectNode defaults(final StructSpec s, final short v)
    {
        final ObjectNode n = F.objectNode();
        for (final FieldSpec f : s.fields())
        {
            if (present(f, v) && !f.isTagged())
            {
                n.set(f.camelName(), defaultValue(f, v));
            }
        }
        return n;
    }

    private boolean present(final FieldSpec f, final short v)
    {
        return f.versions().contains(v) && (!f.isTagged() || spec.flexible().contains(v));
    }

    private ObjectNode struct(final StructSpec s, final short v, final int depth)
    {
        final ObjectNode n = F.objectNode();
        for (final FieldSpec f : s.fields())
        {
            if (!present(f, v))
            {
                continue;
            }
            if (!f.isTagged())
            {
                n.set(f.camelName(), value(f, v, depth));
                continue;
            }
            if (random.nextBoolean())
            {
                continue; // not sent: reads as the default
            }
            final JsonNode dflt = normalize(defaultValue(f, v));
            for (int attempt = 0; attempt < 8; attempt++)
            {
                final JsonNode candidate = value(f, v, depth);
                if (!normalize(candidate).equals(dflt))
                {
                    n.set(f.camelName(), candidate);
                    break;
                }
            }
        }
        return n;
    }

    private JsonNode value(final FieldSpec f, final short v, final int depth)
    {
        if (f.nullable().contains(v) && random.nextInt(6) == 0)
        {
            return F.nullNode();
        }
        final FieldType t = f.type();
        if (t.isStruct())
        {
            return struct(spec.struct(t.structName()), v, depth + 1);
        }
        if (t.isArray())
        {
            final ArrayNode a = F.arrayNode();
            final int size = depth > 3 ? 0 : random.nextInt(4);
            for (int i = 0; i < size; i++)
            {
                a.add(t.element().isStruct() ?
                    struct(spec.struct(t.element().structName()), v, depth + 1) : scalar(t.element()));
            }
            return a;
        }
        return scalar(t);
    }

    private JsonNode scalar(final FieldType t)
    {
        switch (t.kind())
        {
            case BOOL: return F.booleanNode(random.nextBoolean());
            case INT8: return F.numberNode((short)(byte)interesting());
            case INT16: return F.numberNode((short)interesting());
            case UINT16: return F.numberNode((int)(interesting() & 0xFFFF));
            case INT32: return F.numberNode((int)interesting());
            case UINT32: return F.numberNode(interesting() & 0xFFFF_FFFFL);
            case INT64: return F.numberNode(interesting());
            case FLOAT64: return F.numberNode(random.nextInt(3) == 0 ? 0.0 : random.nextDouble() * 1e6 - 5e5);
            case UUID: return F.textNode(new Uuid(random.nextLong(), random.nextLong()).toString());
            case STRING:
            {
                final StringBuilder sb = new StringBuilder();
                final int length = random.nextInt(10);
                for (int i = 0; i < length; i++)
                {
                    final int c = random.nextInt(ALPHABET.length() - 1);
                    sb.append(ALPHABET.charAt(c));
                    if (Character.isHighSurrogate(ALPHABET.charAt(c)))
                    {
                        sb.append(ALPHABET.charAt(c + 1));
                    }
                }
                return F.textNode(sb.toString());
            }
            case BYTES:
            case RECORDS:
            {
                final byte[] b = new byte[random.nextInt(random.nextInt(8) == 0 ? 300 : 12)];
                random.nextBytes(b);
                return F.binaryNode(b);
            }
            default: throw new IllegalArgumentException(t.toString());
        }
    }

    /** Mostly small values and the edges; sometimes anything. */
    private long interesting()
    {
        switch (random.nextInt(6))
        {
            case 0: return -1;
            case 1: return random.nextInt(4);
            case 2: return random.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE;
            case 3: return random.nextInt(200);
            default: return random.nextLong();
        }
    }

    private JsonNode defaultValue(final FieldSpec f, final short v)
    {
        final FieldType t = f.type();
        final boolean dn = "null".equals(f.defaultValue()) ||
            (t.kind() == FieldType.Kind.RECORDS && f.defaultValue() == null);
        if (dn)
        {
            return F.nullNode();
        }
        switch (t.kind())
        {
            case STRING: return F.textNode("");
            case BYTES:
            case RECORDS: return F.binaryNode(new byte[0]);
            case UUID: return F.textNode(Uuid.ZERO_UUID.toString());
            case STRUCT: return defaults(spec.struct(t.structName()), v);
            case ARRAY: return F.arrayNode();
            case BOOL: return F.booleanNode(Boolean.parseBoolean(f.defaultLiteral()));
            case FLOAT64: return F.numberNode(Double.parseDouble(f.defaultLiteral()));
            default:
            {
                final String lit = f.defaultLiteral().replaceAll("\\((byte|short)\\)", "").replace("L", "");
                return F.numberNode(Long.parseLong(lit));
            }
        }
    }

    /** Re-reads a tree from its text, so numbers compare by value and binary by its base64 text. */
    static JsonNode normalize(final JsonNode node)
    {
        try
        {
            return MAPPER.readTree(MAPPER.writeValueAsString(node));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
