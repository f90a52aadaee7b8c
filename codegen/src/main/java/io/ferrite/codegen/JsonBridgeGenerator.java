package io.ferrite.codegen;

import static io.ferrite.codegen.FieldType.Kind;

/**
 * Writes {@code <Message>Json}, a test-only bridge between the generated codecs and the JSON form
 * of Kafka's own {@code *JsonConverter}s. It drives every accessor and setter of the decoder and
 * encoder, so the cross-validation against kafka-clients exercises the real generated API.
 */
final class JsonBridgeGenerator
{
    private final Model model;
    private final MessageSpec message;
    private final JavaWriter w = new JavaWriter();

    JsonBridgeGenerator(final MessageSpec message)
    {
        this.message = message;
        this.model = new Model(message);
    }

    static String className(final MessageSpec m)
    {
        return m.name() + "Json";
    }

    String generate()
    {
        w.line("package io.ferrite.wire.message;");
        w.blank();
        w.line("import com.fasterxml.jackson.databind.JsonNode;");
        w.line("import com.fasterxml.jackson.databind.node.ArrayNode;");
        w.line("import com.fasterxml.jackson.databind.node.JsonNodeFactory;");
        w.line("import com.fasterxml.jackson.databind.node.ObjectNode;");
        w.line("import org.apache.kafka.common.Uuid;");
        w.blank();
        w.line("/** Test bridge: {@code %s} between our codecs and Kafka's JSON form. Generated. */", message.name());
        w.line("@SuppressWarnings({\"unused\", \"PointlessBooleanExpression\", \"ConstantConditions\"})");
        w.line("final class %s {", className(message));
        w.line("private %s() {", className(message));
        w.line("}");
        for (final StructSpec s : model.structs())
        {
            reader(s);
            writer(s);
        }
        w.line("}");
        return w.toString();
    }

    private String decoderType(final StructSpec s)
    {
        return model.isRoot(s) ? message.decoderName() : message.decoderName() + "." + s.name();
    }

    private String encoderType(final StructSpec s)
    {
        return model.isRoot(s) ? message.encoderName() : message.encoderName() + "." + s.name();
    }

    private void reader(final StructSpec s)
    {
        w.blank();
        w.line("static ObjectNode read%s(final %s d, final short v) {", s.name(), decoderType(s));
        w.line("final ObjectNode n = JsonNodeFactory.instance.objectNode();");
        for (final FieldSpec f : s.fields())
        {
            if (!model.presentAnywhere(f, s))
            {
                continue;
            }
            w.line("if (%s) {", model.present(f, s, "v"));
            if (f.isTagged())
            {
                w.line("if (%s) {", decodedNonDefault(f));
            }
            put(f);
            if (f.isTagged())
            {
                w.line("}");
            }
            w.line("}");
        }
        w.line("return n;");
        w.line("}");
    }

    private String decodedNonDefault(final FieldSpec f)
    {
        final String n = "d." + f.camelName();
        final boolean dn = Model.defaultNull(f);
        switch (f.type().kind())
        {
            case STRING:
            case BYTES:
            case RECORDS:
                return dn ? "!" + n + "IsNull()" : n + "IsNull() || " + n + "Length() != 0";
            case UUID:
                return n + "MostSignificantBits() != 0L || " + n + "LeastSignificantBits() != 0L";
            case STRUCT:
            {
                final String st = message.decoderName() + "." + f.type().structName();
                return dn ? n + "() != null" :
                    "!read" + f.type().structName() + "(" + n + "(), v).equals(read" + f.type().structName() +
                        "(JsonSupport.defaults(new " + st + "(), v), v))";
            }
            case ARRAY:
            {
                final String count = f.type().element().isStruct() || f.type().element().isVariableBytes() ?
                    n + "().elementCount()" : n + "Count()";
                return dn ? count + " >= 0" : count + " != 0";
            }
            default:
                return n + "() != " + f.defaultLiteral();
        }
    }

    private void put(final FieldSpec f)
    {
        final String key = "\"" + f.camelName() + "\"";
        final String d = "d." + f.camelName();
        final FieldType t = f.type();
        switch (t.kind())
        {
            case STRING:
                w.line("if (%sIsNull()) { n.putNull(%s); } else { n.put(%s, %s()); }", d, key, key, d);
                break;
            case BYTES:
            case RECORDS:
                w.line("if (%sIsNull()) { n.putNull(%s); } else { n.put(%s, %s()); }", d, key, key, d);
                break;
            case UUID:
                w.line("n.put(%s, new Uuid(%sMostSignificantBits(), %sLeastSignificantBits()).toString());", key, d, d);
                break;
            case STRUCT:
                w.line("{");
                w.line("final var c = %s();", d);
                w.line("if (c == null) { n.putNull(%s); } else { n.set(%s, read%s(c, v)); }", key, key, t.structName());
                w.line("}");
                break;
            case ARRAY:
            {
                final FieldType e = t.element();
                if (e.isStruct())
                {
                    w.line("{");
                    w.line("final var c = %s();", d);
                    w.line("if (c.isNullArray()) {");
                    w.line("n.putNull(%s);", key);
                    w.line("} else {");
                    w.line("final ArrayNode a = n.putArray(%s);", key);
                    w.line("while (c.hasNext()) {");
                    w.line("a.add(read%s(c.next(), v));", e.structName());
                    w.line("}");
                    w.line("}");
                    w.line("}");
                }
                else if (e.isVariableBytes())
                {
                    w.line("{");
                    w.line("final StringArrayDecoder c = %s();", d);
                    w.line("if (c.isNullArray()) {");
                    w.line("n.putNull(%s);", key);
                    w.line("} else {");
                    w.line("final ArrayNode a = n.putArray(%s);", key);
                    w.line("while (c.hasNext()) {");
                    w.line("a.add(c.next().%s());", e.kind() == Kind.STRING ? "value" : "valueBytes");
                    w.line("}");
                    w.line("}");
                    w.line("}");
                }
                else
                {
                    w.line("if (%sCount() < 0) {", d);
                    w.line("n.putNull(%s);", key);
                    w.line("} else {");
                    w.line("final ArrayNode a = n.putArray(%s);", key);
                    w.line("for (int i = 0; i < %sCount(); i++) {", d);
                    if (e.kind() == Kind.UUID)
                    {
                        w.line("a.add(new Uuid(%sMostSignificantBits(i), %sLeastSignificantBits(i)).toString());", d, d);
                    }
                    else
                    {
                        w.line("a.add(%s(i));", d);
                    }
                    w.line("}");
                    w.line("}");
                }
                break;
            }
            default:
                w.line("n.put(%s, %s());", key, d);
        }
    }

    private void writer(final StructSpec s)
    {
        w.blank();
        w.line("static void write%s(final JsonNode n, final %s e, final short v) {", s.name(), encoderType(s));
        for (final FieldSpec f : model.encodeOrder(s))
        {
            w.line("if (%s) {", model.present(f, s, "v"));
            w.line("final JsonNode x = n.get(\"%s\");", f.camelName());
            w.line("if (x != null) {");
            set(f);
            w.line("}");
            w.line("}");
        }
        w.line("}");
    }

    private void set(final FieldSpec f)
    {
        final String e = "e." + f.camelName();
        final FieldType t = f.type();
        final String nullCall;
        switch (t.kind())
        {
            case STRING: nullCall = e + "((CharSequence)null);"; break;
            case BYTES:
            case RECORDS:
            case STRUCT:
            case ARRAY:
                nullCall = (model.nullableAnywhere(f, structOf(f)) || Model.defaultNull(f)) ?
                    e + "Null();" : "throw new IllegalStateException(\"null " + f.name() + "\");";
                break;
            default: nullCall = "throw new IllegalStateException(\"null " + f.name() + "\");";
        }
        w.line("if (x.isNull()) {");
        w.line(nullCall);
        w.line("} else {");
        switch (t.kind())
        {
            case BOOL: w.line("%s(x.asBoolean());", e); break;
            case INT8: w.line("%s((byte)x.asInt());", e); break;
            case INT16: w.line("%s((short)x.asInt());", e); break;
            case UINT16:
            case INT32: w.line("%s(x.asInt());", e); break;
            case UINT32:
            case INT64: w.line("%s(x.asLong());", e); break;
            case FLOAT64: w.line("%s(x.asDouble());", e); break;
            case UUID:
                w.line("final Uuid u = Uuid.fromString(x.asText());");
                w.line("%s(u.getMostSignificantBits(), u.getLeastSignificantBits());", e);
                break;
            case STRING: w.line("%s(x.asText());", e); break;
            case BYTES:
            case RECORDS: w.line("%s(JsonSupport.bytes(x));", e); break;
            case STRUCT: w.line("write%s(x, %s(), v);", t.structName(), e); break;
            case ARRAY:
            {
                final FieldType el = t.element();
                if (el.isStruct())
                {
                    w.line("final var c = %s(x.size());", e);
                    w.line("for (final JsonNode y : x) {");
                    w.line("write%s(y, c.next(), v);", el.structName());
                    w.line("}");
                }
                else
                {
                    w.line("final ArrayEncoder a = %s(x.size());", e);
                    w.line("for (final JsonNode y : x) {");
                    switch (el.kind())
                    {
                        case BOOL: w.line("a.addBool(y.asBoolean());"); break;
                        case INT8: w.line("a.addInt8((byte)y.asInt());"); break;
                        case INT16: w.line("a.addInt16((short)y.asInt());"); break;
                        case UINT16: w.line("a.addUint16(y.asInt());"); break;
                        case INT32: w.line("a.addInt32(y.asInt());"); break;
                        case UINT32: w.line("a.addUint32(y.asLong());"); break;
                        case INT64: w.line("a.addInt64(y.asLong());"); break;
                        case FLOAT64: w.line("a.addFloat64(y.asDouble());"); break;
                        case UUID:
                            w.line("final Uuid u = Uuid.fromString(y.asText());");
                            w.line("a.addUuid(u.getMostSignificantBits(), u.getLeastSignificantBits());");
                            break;
                        case STRING: w.line("a.addString(y.asText());"); break;
                        case BYTES: w.line("a.addBytes(JsonSupport.bytes(y));"); break;
                        default: throw new IllegalArgumentException(el.toString());
                    }
                    w.line("}");
                }
                break;
            }
            default: throw new IllegalArgumentException(t.toString());
        }
        w.line("}");
    }

    private StructSpec structOf(final FieldSpec f)
    {
        for (final StructSpec s : model.structs())
        {
            if (s.fields().contains(f))
            {
                return s;
            }
        }
        throw new IllegalStateException(f.name());
    }
}
