package io.ferrite.codegen;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.ferrite.codegen.FieldType.Kind;

/**
 * Writes {@code <Message>Encoder}: a sequential encoder per struct (see {@code StructEncoder})
 * with one setter per field, called in encoding order, and nested encoders for structs and arrays.
 */
final class EncoderGenerator
{
    private static final Set<String> RESERVED = Set.of(
        "wrap", "finish", "next", "field", "open", "flexible", "writeDefault", "beginElement", "closeElement",
        "beginSingle", "beginArray", "nextElement", "closeNested", "beginMessage", "finishMessage", "beginTagged",
        "getClass", "hashCode", "equals", "toString", "notify", "notifyAll", "wait", "clone", "finalize");

    private final Model model;
    private final MessageSpec message;
    private final JavaWriter w = new JavaWriter();

    EncoderGenerator(final MessageSpec message)
    {
        this.message = message;
        this.model = new Model(message);
    }

    String generate()
    {
        final String root = message.encoderName();
        w.line("package io.ferrite.wire.message;");
        w.blank();
        w.line("import org.agrona.DirectBuffer;");
        w.line("import org.agrona.MutableDirectBuffer;");
        w.blank();
        w.line("/**");
        w.line(" * Encoder of Kafka's {@code %s} (%s), versions %s, flexible %s: call the setters in encoding", message.name(),
            message.apiKey() >= 0 ? "API key " + message.apiKey() : message.type(), message.valid(), message.flexible());
        w.line(" * order; skipped fields get their defaults. Generated at build time from the schema in kafka-clients.");
        w.line(" */");
        w.line("@SuppressWarnings({\"unused\", \"PointlessBooleanExpression\", \"ConstantConditions\"})");
        w.line("public final class %s extends StructEncoder {", root);
        if (message.apiKey() >= 0)
        {
            w.line("public static final short API_KEY = %d;", message.apiKey());
        }
        w.line("public static final short LOWEST_VERSION = %d;", message.valid().lowest());
        w.line("public static final short HIGHEST_VERSION = %d;", message.valid().highest());
        w.line("private static final byte[] EMPTY = new byte[0];");
        w.blank();
        w.line("public %s() {", root);
        w.line("this(new EncodeCursor());");
        w.line("}");
        w.blank();
        w.line("/**");
        w.line(" * Starts a message at {@code offset}.");
        w.line(" *");
        w.line(" * @throws IllegalArgumentException when the version is not one the schema declares valid");
        w.line(" */");
        w.line("public %s wrap(final MutableDirectBuffer buffer, final int offset, final short version) {", root);
        w.line("if (version < LOWEST_VERSION || version > HIGHEST_VERSION) {");
        w.line("throw Encoding.unsupportedVersion(\"%s\", version);", message.name());
        w.line("}");
        w.line("out.wrap(buffer, offset, version);");
        w.line("beginMessage(offset);");
        w.line("return this;");
        w.line("}");
        w.blank();
        w.line("/** Writes the defaults of the fields not yet written and returns the message's length in bytes. */");
        w.line("public int finish() {");
        w.line("return finishMessage();");
        w.line("}");
        w.blank();
        structBody(message.root(), root);
        for (final StructSpec s : model.structs())
        {
            if (!model.isRoot(s))
            {
                w.blank();
                w.line("/** Encoder of the struct {@code %s}. */", s.name());
                w.line("public static final class %s extends StructEncoder {", s.name());
                structBody(s, s.name());
                w.blank();
                w.line("/** Starts the next element of the array. */");
                w.line("public %s next() {", s.name());
                w.line("nextElement();");
                w.line("return this;");
                w.line("}");
                w.line("}");
            }
        }
        w.line("}");
        return w.toString();
    }

    private void structBody(final StructSpec s, final String cls)
    {
        final List<FieldSpec> order = model.encodeOrder(s);
        int regular = 0;
        for (final FieldSpec f : order)
        {
            regular += f.isTagged() ? 0 : 1;
        }
        // field indices: regular fields, the tagged section, tagged fields, end
        for (int i = 0; i < order.size(); i++)
        {
            final FieldSpec f = order.get(i);
            w.line("private static final int %s = %d;", Model.constant(f), f.isTagged() ? i + 1 : i);
        }
        w.line("private static final int F_TAGGED_FIELDS = %d;", regular);
        w.line("private static final int F_END = %d;", order.size() + 1);
        w.blank();
        // names the base class uses for its own state
        final Set<String> members = new HashSet<>(Set.of("out"));
        for (final FieldSpec f : order)
        {
            final FieldType t = f.type();
            if (t.isStruct())
            {
                w.line("private final %s %s;", t.structName(), Model.checkName(s.name(), f.camelName(), members));
            }
            else if (t.isArray())
            {
                final String type = t.isStructArray() ? t.element().structName() : "ArrayEncoder";
                w.line("private final %s %s;", type, Model.checkName(s.name(), f.camelName(), members));
            }
        }
        w.blank();
        w.line("%s(final EncodeCursor out) {", cls);
        w.line("super(out, F_TAGGED_FIELDS, F_END);");
        for (final FieldSpec f : order)
        {
            final FieldType t = f.type();
            if (t.isStruct())
            {
                w.line("this.%s = new %s(out);", f.camelName(), t.structName());
            }
            else if (t.isStructArray())
            {
                w.line("this.%s = new %s(out);", f.camelName(), t.element().structName());
            }
            else if (t.isArray())
            {
                w.line("this.%s = new ArrayEncoder(out, ArrayEncoder.%s, \"%s\");", f.camelName(),
                    t.element().kind().name(), f.name());
            }
        }
        w.line("}");
        w.blank();
        w.line("@Override");
        w.line("protected boolean flexible(final short v) {");
        w.line("return %s;", model.flexibleAnywhere(s) ? model.flexible(s, "v") : "false");
        w.line("}");

        final Set<String> methods = new HashSet<>(RESERVED);
        for (final FieldSpec f : order)
        {
            setters(f, s, cls, methods);
        }

        w.blank();
        w.line("@Override");
        w.line("protected void writeDefault(final int field) {");
        w.line("switch (field) {");
        for (final FieldSpec f : order)
        {
            if (f.isTagged())
            {
                continue; // a tagged field at its default is not written at all
            }
            w.line("case %s:", Model.constant(f));
            w.line("%s;", defaultCall(f));
            w.line("break;");
        }
        w.line("default:");
        w.line("break;");
        w.line("}");
        w.line("}");
    }

    private String defaultCall(final FieldSpec f)
    {
        final String n = f.camelName();
        final boolean dn = Model.defaultNull(f);
        switch (f.type().kind())
        {
            case STRING: return dn ? n + "((CharSequence)null)" : n + "(\"\")";
            case BYTES:
            case RECORDS: return dn ? n + "Null()" : n + "(EMPTY)";
            case UUID: return n + "(0L, 0L)";
            case STRUCT: return dn ? n + "Null()" : n + "()";
            case ARRAY: return dn ? n + "Null()" : n + "(0)";
            default: return n + "(" + f.defaultLiteral() + ")";
        }
    }

    /** Opens a setter: moves to the field and binds {@code v}. */
    private void enter(final FieldSpec f)
    {
        w.line("field(%s);", Model.constant(f));
        w.line("final short v = out.version();");
    }

    /** The {@code else} branch for a version without the field: a non-default value throws unless ignorable. */
    private void absent(final FieldSpec f, final String nonDefault)
    {
        if (!f.ignorable() && !nonDefault.equals("false"))
        {
            w.line("} else if (%s) {", nonDefault);
            w.line("throw Encoding.nonDefault(\"%s\", v);", f.name());
        }
        w.line("}");
    }

    private void setters(final FieldSpec f, final StructSpec s, final String cls, final Set<String> methods)
    {
        final String n = f.camelName();
        final FieldType t = f.type();
        final String present = model.presentAnywhere(f, s) ? model.present(f, s, "v") : "false";
        final String compact = model.compact(f, s, "v");
        final String nullable = model.nullable(f, s, "v");
        final boolean dn = Model.defaultNull(f);
        final boolean tagged = f.isTagged();
        final boolean hasNull = model.nullableAnywhere(f, s) || dn;
        switch (t.kind())
        {
            case STRING:
                valueSetter(f, s, cls, methods, n, "final CharSequence value",
                    "Encoding.string(out, value, " + compact + ", " + nullable + ", \"" + f.name() + "\")",
                    dn ? "value != null" : "value == null || value.length() != 0");
                valueSetter(f, s, cls, null, n, "final DirectBuffer src, final int offset, final int length",
                    "Encoding.string(out, src, offset, length, " + compact + ", \"" + f.name() + "\")",
                    dn ? "true" : "length != 0");
                break;
            case BYTES:
            case RECORDS:
                valueSetter(f, s, cls, methods, n, "final byte[] value",
                    "Encoding.bytes(out, value, " + compact + ", " + nullable + ", \"" + f.name() + "\")",
                    dn ? "value != null" : "value == null || value.length != 0");
                valueSetter(f, s, cls, null, n, "final DirectBuffer src, final int offset, final int length",
                    "Encoding.bytes(out, src, offset, length, " + compact + ")",
                    dn ? "true" : "length != 0");
                if (t.kind() == Kind.RECORDS && !f.isTagged())
                {
                    // zero-copy: the length prefix here, the bytes spliced in by the sender (sendfile)
                    w.blank();
                    w.line("/**");
                    w.line(" * Writes only the length prefix of {@code %s}: its {@code length} bytes follow in the message", f.name());
                    w.line(" * but are not written here — the caller sends them from elsewhere (a file region) at");
                    w.line(" * the current position of the output. Returns that position.");
                    w.line(" */");
                    w.line("public int %s(final int length) {", Model.checkName(s.name(), n + "External", methods));
                    enter(f);
                    w.line("if (!(%s)) {", present);
                    w.line("throw Encoding.nonDefault(\"%s\", v);", f.name());
                    w.line("}");
                    w.line("Encoding.lengthPrefix(out, length, %s);", compact);
                    w.line("return out.position();");
                    w.line("}");
                }
                if (hasNull)
                {
                    nullSetter(f, s, cls, methods, present, nullable, "Encoding.nullValue(out, " + compact + ", true, false, \"" + f.name() + "\");");
                }
                break;
            case UUID:
                valueSetter(f, s, cls, methods, n, "final long mostSignificantBits, final long leastSignificantBits",
                    "out.putUuid(mostSignificantBits, leastSignificantBits)",
                    "mostSignificantBits != 0L || leastSignificantBits != 0L");
                break;
            case STRUCT:
            {
                w.blank();
                w.doc(f.about() + " Returns the struct's encoder; it stays open until this one moves on.");
                w.line("public %s %s() {", t.structName(), Model.checkName(s.name(), n, methods));
                enter(f);
                w.line("if (%s) {", present);
                w.line("final int sizeAt = %s;", tagged ? "beginTagged(" + f.tag() + ")" : "-1");
                if (!nullable.equals("false"))
                {
                    w.line("if (%s) {", nullable);
                    w.line("out.putByte(1);");
                    w.line("}");
                }
                w.line("%s.beginSingle(sizeAt, -1);", n);
                w.line("} else {");
                w.line("%s.beginSingle(-1, out.position());", n);
                w.line("}");
                w.line("return open(%s);", n);
                w.line("}");
                if (hasNull)
                {
                    nullSetter(f, s, cls, methods, present, nullable, "out.putByte(-1);");
                }
                break;
            }
            case ARRAY:
            {
                final FieldType e = t.element();
                final String type = e.isStruct() ? e.structName() : "ArrayEncoder";
                final String nonDefault = dn ? "true" : "count != 0";
                w.blank();
                w.doc(f.about() + " Declares the element count and returns the elements' encoder.");
                w.line("public %s %s(final int count) {", type, Model.checkName(s.name(), n, methods));
                enter(f);
                w.line("if (%s) {", present);
                if (tagged)
                {
                    w.line("if (%s) {", nonDefault);
                    w.line("final int sizeAt = beginTagged(%d);", f.tag());
                    w.line("Encoding.arrayCount(out, count, %s, \"%s\");", compact, f.name());
                    begin(f, n, "sizeAt", "-1", compact);
                    w.line("} else {");
                    begin(f, n, "-1", "out.position()", compact);
                    w.line("}");
                }
                else
                {
                    w.line("Encoding.arrayCount(out, count, %s, \"%s\");", compact, f.name());
                    begin(f, n, "-1", "-1", compact);
                }
                w.line("} else {");
                if (!f.ignorable() && !nonDefault.equals("false"))
                {
                    w.line("if (%s) {", nonDefault);
                    w.line("throw Encoding.nonDefault(\"%s\", v);", f.name());
                    w.line("}");
                }
                begin(f, n, "-1", "out.position()", compact);
                w.line("}");
                w.line("return open(%s);", n);
                w.line("}");
                if (hasNull)
                {
                    nullSetter(f, s, cls, methods, present, nullable, "Encoding.nullValue(out, " + compact + ", true, false, \"" + f.name() + "\");");
                }
                break;
            }
            default:
                valueSetter(f, s, cls, methods, n, "final " + t.javaType() + " value", fixedWrite(t.kind()),
                    "value != " + f.defaultLiteral());
        }
    }

    /**
     * A setter that writes one value: where the version has the field, the value (a tagged field
     * only when it is not the default); elsewhere a non-default value throws unless ignorable.
     *
     * @param methods the names taken so far, or null for an overload of a name already checked
     */
    private void valueSetter(
        final FieldSpec f, final StructSpec s, final String cls, final Set<String> methods, final String name,
        final String params, final String write, final String nonDefault)
    {
        w.blank();
        w.doc(f.about());
        w.line("public %s %s(%s) {", cls, methods == null ? name : Model.checkName(s.name(), name, methods), params);
        enter(f);
        w.line("if (%s) {", model.presentAnywhere(f, s) ? model.present(f, s, "v") : "false");
        if (f.isTagged())
        {
            w.line("if (%s) {", nonDefault);
            w.line("final int sizeAt = beginTagged(%d);", f.tag());
            w.line("%s;", write);
            w.line("out.patchSize(sizeAt);");
            w.line("}");
        }
        else
        {
            w.line("%s;", write);
        }
        absent(f, nonDefault);
        w.line("return this;");
        w.line("}");
    }

    private void begin(final FieldSpec f, final String n, final String sizeAt, final String discardFrom, final String compact)
    {
        if (f.type().isStructArray())
        {
            w.line("%s.beginArray(count, %s, %s);", n, sizeAt, discardFrom);
        }
        else
        {
            w.line("%s.begin(count, %s, %s, %s);", n, compact, sizeAt, discardFrom);
        }
    }

    /**
     * {@code fooNull()}: writes null where the version allows it; in a tagged field, a null that is
     * the default is not written at all.
     */
    private void nullSetter(
        final FieldSpec f, final StructSpec s, final String cls, final Set<String> methods, final String present,
        final String nullable, final String writeNull)
    {
        final boolean dn = Model.defaultNull(f);
        w.blank();
        w.line("/** Writes {@code %s} as null. */", f.name());
        w.line("public %s %s() {", cls, Model.checkName(s.name(), f.camelName() + "Null", methods));
        enter(f);
        w.line("if (%s) {", present);
        w.line("if (!(%s)) {", nullable);
        w.line("throw new IllegalArgumentException(\"non-nullable field %s was serialized as null\");", f.name());
        w.line("}");
        if (f.isTagged())
        {
            if (!dn)
            {
                w.line("final int sizeAt = beginTagged(%d);", f.tag());
                w.line(writeNull);
                w.line("out.patchSize(sizeAt);");
            }
        }
        else
        {
            w.line(writeNull);
        }
        absent(f, dn ? "false" : "true");
        w.line("return this;");
        w.line("}");
    }

    private static String fixedWrite(final Kind k)
    {
        switch (k)
        {
            case BOOL: return "out.putBool(value)";
            case INT8: return "out.putByte(value)";
            case INT16:
            case UINT16: return "out.putShort(value)";
            case INT32: return "out.putInt(value)";
            case UINT32: return "out.putInt((int)value)";
            case INT64: return "out.putLong(value)";
            case FLOAT64: return "out.putDouble(value)";
            default: throw new IllegalArgumentException(k.name());
        }
    }
}
