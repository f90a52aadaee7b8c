package io.ferrite.codegen;

import java.util.HashSet;
import java.util.Set;

import static io.ferrite.codegen.FieldType.Kind;

/**
 * Writes {@code <Message>Decoder}: a flyweight per struct (see {@code StructDecoder}) whose
 * {@code wrap} walks and checks the struct and records where each field starts, and whose
 * accessors read in place. This class writes the fields, {@code wrap} (the walk and its checks)
 * and the defaults; {@link DecoderAccessors} writes the accessors.
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
    private final DecoderAccessors accessors;

    DecoderGenerator(final MessageSpec message)
    {
        this.message = message;
        this.model = new Model(message);
        this.accessors = new DecoderAccessors(model, w);
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
        final boolean record = message.isCoordinatorRecord();
        w.line(" * Flyweight decoder of Kafka's {@code %s} (%s), versions %s, flexible %s.", message.name(),
            message.apiKey() < 0 ? message.type() : (record ? "record type " : "API key ") + message.apiKey(), message.valid(),
            message.flexible());
        w.line(" * Generated at build time from the schema in %s; not checked in.", record ? "Kafka's coordinator jars" : "kafka-clients");
        w.line(" */");
        w.line("@SuppressWarnings({\"unused\", \"PointlessBooleanExpression\", \"ConstantConditions\"})");
        w.line("public final class %s extends StructDecoder {", message.decoderName());
        if (message.apiKey() >= 0)
        {
            w.line("public static final short %s = %d;", record ? "RECORD_TYPE" : "API_KEY", message.apiKey());
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
                w.line("public static final class %s extends StructDecoder implements ArrayDecoder<%s> {", s.name(), s.name());
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
            w.line("throw Decoding.unsupportedVersion(\"%s\", v);", message.name());
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
            w.line("@Override");
            w.line("public %s next() {", className);
            w.line("nextElement();");
            w.line("return this;");
            w.line("}");
        }

        for (final FieldSpec f : s.fields())
        {
            if (model.presentAnywhere(f, s))
            {
                accessors.write(f, s, methodNames);
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
}
