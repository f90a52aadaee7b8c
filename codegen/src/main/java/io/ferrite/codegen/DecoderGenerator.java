package io.ferrite.codegen;

import java.util.HashSet;
import java.util.Set;

import static io.ferrite.codegen.FieldType.Kind;

/**
 * Writes {@code <Message>Decoder}: a flyweight per struct (see {@code StructDecoder}) whose
 * {@code wrap} walks and checks the struct and records where each field starts, and whose
 * accessors read in place.
 */
final class DecoderGenerator
{
    private static final Set<String> RESERVED = Set.of(
        "wrap", "wrapDefaults", "begin", "finish", "buffer", "messageVersion", "encodedOffset", "encodedLength",
        "unknownTaggedFields", "elements", "elementCount", "isNullArray", "hasNext", "next", "nextElement",
        "skipTaggedFields", "readTaggedFields", "getClass", "hashCode", "equals", "toString", "notify", "notifyAll",
        "wait", "clone", "finalize");

    private final Model model;
    private final MessageSpec message;
    private final JavaWriter w = new JavaWriter();

    DecoderGenerator(final MessageSpec message)
    {
        this.message = message;
        this.model = new Model(message);
    }

    String generate()
    {
        w.line("package io.ferrite.wire.message;");
        w.blank();
        w.line("import io.ferrite.wire.Varints;");
        w.line("import org.agrona.DirectBuffer;");
        w.blank();
        w.line("import java.util.Objects;");
        w.blank();
        w.line("import static java.nio.ByteOrder.BIG_ENDIAN;");
        w.blank();
        w.line("/**");
        w.line(" * Flyweight decoder of Kafka's {@code %s} (%s), versions %s, flexible %s.", message.name(),
            message.apiKey() >= 0 ? "API key " + message.apiKey() : message.type(), message.valid(), message.flexible());
        w.line(" * Generated at build time from the schema in kafka-clients; not checked in.");
        w.line(" */");
        w.line("@SuppressWarnings({\"unused\", \"PointlessBooleanExpression\", \"ConstantConditions\"})");
        w.line("public final class %s extends StructDecoder {", message.decoderName());
        if (message.apiKey() >= 0)
        {
            w.line("public static final short API_KEY = %d;", message.apiKey());
        }
        w.line("public static final short LOWEST_VERSION = %d;", message.valid().lowest());
        w.line("public static final short HIGHEST_VERSION = %d;", message.valid().highest());
        w.blank();
        structBody(message.root(), message.decoderName());
        for (final StructSpec s : model.structs())
        {
            if (!model.isRoot(s))
            {
                w.blank();
                w.line("/** Decoder of the struct {@code %s}. */", s.name());
                w.line("public static final class %s extends StructDecoder {", s.name());
                structBody(s, s.name());
                w.line("}");
            }
        }
        w.line("}");
        return w.toString();
    }

    private void structBody(final StructSpec s, final String className)
    {
        // names the base class uses for its own state
        final Set<String> fieldNames = new HashSet<>(Set.of("buffer", "version", "offset", "end", "unknownTaggedFields"));
        final Set<String> methodNames = new HashSet<>(RESERVED);
        for (final FieldSpec f : s.fields())
        {
            if (!model.presentAnywhere(f, s))
            {
                continue;
            }
            final String n = f.camelName();
            final Kind k = f.type().kind();
            Model.checkName(s.name(), n + "At", fieldNames);
            if (k == Kind.STRUCT || f.type().isArray())
            {
                Model.checkName(s.name(), n + "End", fieldNames);
            }
            if (f.type().isVariableBytes())
            {
                Model.checkName(s.name(), n + "Length", fieldNames);
            }
            if (f.type().isArray())
            {
                Model.checkName(s.name(), n + "Count", fieldNames);
            }
            if (k == Kind.STRUCT || f.type().isArray() && !f.type().element().kind().isFixed())
            {
                Model.checkName(s.name(), n, fieldNames);
            }
            if (k == Kind.STRUCT)
            {
                w.line("private final %s %s = new %s();", f.type().structName(), n, f.type().structName());
            }
            else if (f.type().isStructArray())
            {
                w.line("private final %s %s = new %s();", f.type().element().structName(), n, f.type().element().structName());
            }
            else if (f.type().isArray() && f.type().element().isVariableBytes())
            {
                w.line("private final StringArrayDecoder %s = new StringArrayDecoder(%s);", n,
                    f.type().element().kind() == Kind.BYTES);
            }
            w.line("private int %sAt;", n);
            if (f.type().isVariableBytes())
            {
                w.line("private int %sLength;", n);
            }
            if (f.type().isArray())
            {
                w.line("private int %sCount;", n);
            }
            if (k == Kind.STRUCT || f.type().isArray())
            {
                w.line("private int %sEnd;", n);
            }
        }
        w.blank();

        // wrap
        w.line("@Override");
        w.line("public int wrap(final DirectBuffer buffer, final int offset, final int limit, final short v) {");
        if (model.isRoot(s))
        {
            w.line("if (v < LOWEST_VERSION || v > HIGHEST_VERSION) {");
            w.line("throw new io.ferrite.wire.ProtocolException(\"%s\", \"unsupported version \" + v);", message.name());
            w.line("}");
        }
        w.line("begin(buffer, offset, v);");
        w.line("int p = offset;");
        for (final FieldSpec f : s.fields())
        {
            if (!model.presentAnywhere(f, s))
            {
                continue;
            }
            if (f.isTagged())
            {
                defaults(f);
                continue;
            }
            final String cond = model.present(f, s, "v");
            if (cond.equals("true"))
            {
                read(f, s, "limit");
            }
            else
            {
                w.line("if (%s) {", cond);
                read(f, s, "limit");
                w.line("} else {");
                defaults(f);
                w.line("}");
            }
        }
        if (model.flexibleAnywhere(s))
        {
            final String flex = model.flexible(s, "v");
            final String call = s.hasTaggedFields() ?
                "readTaggedFields(buffer, p, limit, v)" : "skipTaggedFields(buffer, p, limit)";
            if (flex.equals("true"))
            {
                w.line("p = %s;", call);
            }
            else
            {
                w.line("if (%s) {", flex);
                w.line("p = %s;", call);
                w.line("}");
            }
        }
        w.line("return finish(p);");
        w.line("}");
        w.blank();

        // wrapDefaults
        w.line("@Override");
        w.line("protected void wrapDefaults(final short v) {");
        w.line("begin(null, 0, v);");
        for (final FieldSpec f : s.fields())
        {
            if (model.presentAnywhere(f, s))
            {
                defaults(f);
            }
        }
        w.line("finish(0);");
        w.line("}");

        if (s.hasTaggedFields() && model.flexibleAnywhere(s))
        {
            taggedReader(s);
        }

        if (!model.isRoot(s))
        {
            w.blank();
            w.line("/** Moves to the next element of the array this decoder iterates. */");
            w.line("public %s next() {", className);
            w.line("nextElement();");
            w.line("return this;");
            w.line("}");
        }

        for (final FieldSpec f : s.fields())
        {
            if (model.presentAnywhere(f, s))
            {
                accessors(f, s, methodNames);
            }
        }
    }

    private void taggedReader(final StructSpec s)
    {
        w.blank();
        w.line("private int readTaggedFields(final DirectBuffer buffer, final int offset, final int limit, final short v) {");
        w.line("int p = offset;");
        w.line("final long n = Decoding.count(buffer, p, limit, \"TaggedFields\");");
        w.line("p += Varints.size(n);");
        w.line("for (int t = 0, count = Varints.value(n); t < count; t++) {");
        w.line("final long tag = Decoding.count(buffer, p, limit, \"TaggedFields\");");
        w.line("p += Varints.size(tag);");
        w.line("final long size = Decoding.count(buffer, p, limit, \"TaggedFields\");");
        w.line("p += Varints.size(size);");
        w.line("final int fieldEnd = Decoding.require(p, Varints.value(size), limit, \"TaggedFields\");");
        w.line("switch (Varints.value(tag)) {");
        for (final FieldSpec f : model.encodeOrder(s))
        {
            if (!f.isTagged() || !model.presentAnywhere(f, s))
            {
                continue;
            }
            w.line("case %d:", f.tag());
            final String cond = model.present(f, s, "v");
            w.line("if (%s) {", cond);
            read(f, s, "fieldEnd");
            w.line("Decoding.requireEnd(p, fieldEnd, \"%s\");", f.name());
            w.line("break;");
            w.line("}");
            w.line("unknownTaggedFields++;");
            w.line("break;");
        }
        w.line("default:");
        w.line("unknownTaggedFields++;");
        w.line("break;");
        w.line("}");
        w.line("p = fieldEnd;");
        w.line("}");
        w.line("return p;");
        w.line("}");
    }

    /** Code that reads field {@code f} at {@code p} (not past {@code lim}) and advances {@code p}. */
    private void read(final FieldSpec f, final StructSpec s, final String lim)
    {
        final String n = f.camelName();
        final FieldType t = f.type();
        final String compact = model.compact(f, s, "v");
        final String nullable = model.nullable(f, s, "v");
        switch (t.kind())
        {
            case STRING:
            case BYTES:
            case RECORDS:
                w.line("{");
                w.line("final long h = Decoding.%s(buffer, p, %s, %s, %s, \"%s\");",
                    t.kind() == Kind.STRING ? "string" : "bytes", lim, compact, nullable, f.name());
                w.line("%sAt = Decoding.at(h);", n);
                w.line("%sLength = Decoding.length(h);", n);
                w.line("p = %sAt + Math.max(%sLength, 0);", n, n);
                w.line("}");
                break;
            case STRUCT:
                if (!nullable.equals("false"))
                {
                    w.line("if (%s) {", nullable);
                    w.line("p = Decoding.require(p, 1, %s, \"%s\");", lim, f.name());
                    w.line("if (buffer.getByte(p - 1) < 0) {");
                    w.line("%sAt = -2;", n);
                    w.line("} else {");
                    w.line("%sAt = p;", n);
                    w.line("p = %s.wrap(buffer, p, %s, v);", n, lim);
                    w.line("}");
                    w.line("} else {");
                    w.line("%sAt = p;", n);
                    w.line("p = %s.wrap(buffer, p, %s, v);", n, lim);
                    w.line("}");
                }
                else
                {
                    w.line("%sAt = p;", n);
                    w.line("p = %s.wrap(buffer, p, %s, v);", n, lim);
                }
                w.line("%sEnd = p;", n);
                break;
            case ARRAY:
            {
                w.line("{");
                w.line("final long h = Decoding.array(buffer, p, %s, %s, %s, \"%s\");", lim, compact, nullable, f.name());
                w.line("%sCount = Decoding.length(h);", n);
                w.line("p = Decoding.at(h);");
                w.line("%sAt = p;", n);
                final FieldType e = t.element();
                if (e.isStruct())
                {
                    w.line("for (int i = 0; i < %sCount; i++) {", n);
                    w.line("p = %s.wrap(buffer, p, %s, v);", n, lim);
                    w.line("}");
                }
                else if (e.isVariableBytes())
                {
                    w.line("for (int i = 0; i < %sCount; i++) {", n);
                    w.line("p = Decoding.skip%s(buffer, p, %s, %s, \"%s\");",
                        e.kind() == Kind.STRING ? "String" : "Bytes", lim, compact, f.name());
                    w.line("}");
                }
                else
                {
                    w.line("p = Decoding.require(p, (long)Math.max(%sCount, 0) * %d, %s, \"%s\");",
                        n, e.kind().width, lim, f.name());
                }
                w.line("%sEnd = p;", n);
                w.line("}");
                break;
            }
            default:
                w.line("%sAt = p;", n);
                w.line("p = Decoding.require(p, %d, %s, \"%s\");", t.kind().width, lim, f.name());
        }
    }

    private void defaults(final FieldSpec f)
    {
        final String n = f.camelName();
        final FieldType t = f.type();
        final boolean dn = Model.defaultNull(f);
        if (t.kind() == Kind.STRUCT)
        {
            w.line("%sAt = %d;", n, dn ? -2 : -1);
            return;
        }
        w.line("%sAt = -1;", n);
        if (t.isVariableBytes())
        {
            w.line("%sLength = %d;", n, dn ? -1 : 0);
        }
        if (t.isArray())
        {
            w.line("%sCount = %d;", n, dn ? -1 : 0);
            w.line("%sEnd = -1;", n);
        }
    }

    private void accessors(final FieldSpec f, final StructSpec s, final Set<String> methods)
    {
        final String n = f.camelName();
        final FieldType t = f.type();
        final String about = f.about();
        w.blank();
        switch (t.kind())
        {
            case STRING:
                w.doc(about);
                w.line("public String %s() {", Model.checkName(s.name(), n, methods));
                w.line("return %sLength < 0 ? null : %sLength == 0 ? \"\" : buffer.getStringWithoutLengthUtf8(%sAt, %sLength);", n, n, n, n);
                w.line("}");
                lengthAccessors(f, s, methods);
                break;
            case BYTES:
            case RECORDS:
                w.doc(about + " (a copy; see the offset and length accessors to read in place)");
                w.line("public byte[] %s() {", Model.checkName(s.name(), n, methods));
                w.line("if (%sLength < 0) {", n);
                w.line("return null;");
                w.line("}");
                w.line("final byte[] b = new byte[%sLength];", n);
                w.line("if (%sLength > 0) {", n);
                w.line("buffer.getBytes(%sAt, b);", n);
                w.line("}");
                w.line("return b;");
                w.line("}");
                lengthAccessors(f, s, methods);
                break;
            case UUID:
                w.doc(about);
                w.line("public long %sMostSignificantBits() {", n);
                Model.checkName(s.name(), n + "MostSignificantBits", methods);
                w.line("return %sAt < 0 ? 0L : buffer.getLong(%sAt, BIG_ENDIAN);", n, n);
                w.line("}");
                w.blank();
                w.line("public long %sLeastSignificantBits() {", n);
                Model.checkName(s.name(), n + "LeastSignificantBits", methods);
                w.line("return %sAt < 0 ? 0L : buffer.getLong(%sAt + 8, BIG_ENDIAN);", n, n);
                w.line("}");
                break;
            case STRUCT:
                w.doc(about + (model.nullableAnywhere(f, s) || Model.defaultNull(f) ? " Null when null." : ""));
                w.line("public %s %s() {", t.structName(), Model.checkName(s.name(), n, methods));
                w.line("if (%sAt == -2) {", n);
                w.line("return null;");
                w.line("}");
                w.line("if (%sAt < 0) {", n);
                w.line("%s.wrapDefaults(version);", n);
                w.line("} else {");
                w.line("%s.wrap(buffer, %sAt, %sEnd, version);", n, n, n);
                w.line("}");
                w.line("return %s;", n);
                w.line("}");
                break;
            case ARRAY:
                arrayAccessors(f, s, methods);
                break;
            default:
                w.doc(about);
                w.line("public %s %s() {", t.javaType(), Model.checkName(s.name(), n, methods));
                w.line("return %sAt < 0 ? %s : %s;", n, f.defaultLiteral(), fixedRead(t.kind(), n + "At"));
                w.line("}");
        }
    }

    private void lengthAccessors(final FieldSpec f, final StructSpec s, final Set<String> methods)
    {
        final String n = f.camelName();
        w.blank();
        w.line("/** Length in bytes of {@code %s}; -1 when null. */", f.name());
        w.line("public int %s() {", Model.checkName(s.name(), n + "Length", methods));
        w.line("return %sLength;", n);
        w.line("}");
        w.blank();
        w.line("/** Offset of the bytes of {@code %s} in {@link #buffer()}; -1 when not in the message. */", f.name());
        w.line("public int %s() {", Model.checkName(s.name(), n + "Offset", methods));
        w.line("return %sAt;", n);
        w.line("}");
        w.blank();
        w.line("public boolean %s() {", Model.checkName(s.name(), n + "IsNull", methods));
        w.line("return %sLength < 0;", n);
        w.line("}");
    }

    private void arrayAccessors(final FieldSpec f, final StructSpec s, final Set<String> methods)
    {
        final String n = f.camelName();
        final FieldType e = f.type().element();
        if (e.isStruct())
        {
            w.doc(f.about() + " Iterate with hasNext() and next().");
            w.line("public %s %s() {", e.structName(), Model.checkName(s.name(), n, methods));
            w.line("%s.elements(buffer, %sAt, %sCount, %sEnd, version);", n, n, n, n);
            w.line("return %s;", n);
            w.line("}");
            return;
        }
        if (e.isVariableBytes())
        {
            w.doc(f.about() + " Iterate with hasNext() and next().");
            w.line("public StringArrayDecoder %s() {", Model.checkName(s.name(), n, methods));
            w.line("%s.reset(buffer, %sAt, %sCount, %sEnd, %s);", n, n, n, n, model.compact(f, s, "version"));
            w.line("return %s;", n);
            w.line("}");
            return;
        }
        w.line("/** Elements in {@code %s}; -1 when null. */", f.name());
        w.line("public int %s() {", Model.checkName(s.name(), n + "Count", methods));
        w.line("return %sCount;", n);
        w.line("}");
        w.blank();
        if (e.kind() == Kind.UUID)
        {
            w.line("public long %s(final int index) {", Model.checkName(s.name(), n + "MostSignificantBits", methods));
            w.line("return buffer.getLong(%sAt + Objects.checkIndex(index, %sCount) * 16, BIG_ENDIAN);", n, n);
            w.line("}");
            w.blank();
            w.line("public long %s(final int index) {", Model.checkName(s.name(), n + "LeastSignificantBits", methods));
            w.line("return buffer.getLong(%sAt + Objects.checkIndex(index, %sCount) * 16 + 8, BIG_ENDIAN);", n, n);
            w.line("}");
            return;
        }
        w.doc(f.about());
        w.line("public %s %s(final int index) {", e.javaType(), Model.checkName(s.name(), n, methods));
        w.line("final int at = %sAt + Objects.checkIndex(index, %sCount) * %d;", n, n, e.kind().width);
        w.line("return %s;", fixedRead(e.kind(), "at"));
        w.line("}");
    }

    private static String fixedRead(final Kind k, final String at)
    {
        switch (k)
        {
            case BOOL: return "buffer.getByte(" + at + ") != 0";
            case INT8: return "buffer.getByte(" + at + ")";
            case INT16: return "buffer.getShort(" + at + ", BIG_ENDIAN)";
            case UINT16: return "(buffer.getShort(" + at + ", BIG_ENDIAN) & 0xFFFF)";
            case INT32: return "buffer.getInt(" + at + ", BIG_ENDIAN)";
            case UINT32: return "(buffer.getInt(" + at + ", BIG_ENDIAN) & 0xFFFF_FFFFL)";
            case INT64: return "buffer.getLong(" + at + ", BIG_ENDIAN)";
            case FLOAT64: return "buffer.getDouble(" + at + ", BIG_ENDIAN)";
            default: throw new IllegalArgumentException(k.name());
        }
    }
}
