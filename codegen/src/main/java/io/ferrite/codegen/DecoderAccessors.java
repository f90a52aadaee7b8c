package io.ferrite.codegen;

import java.util.Set;

import static io.ferrite.codegen.FieldType.Kind;

/**
 * The read side of a generated decoder, for {@link DecoderGenerator}: the public accessors of each
 * field, which read in place at the offsets {@code wrap} recorded ({@code <field>At}, and
 * {@code <field>Length}, {@code <field>Count}, {@code <field>End} where the field has them). A
 * field absent in the wrapped version ({@code <field>At} below 0) reads as its default.
 */
final class DecoderAccessors
{
    private final Model model;
    private final JavaWriter w;

    DecoderAccessors(final Model model, final JavaWriter w)
    {
        this.model = model;
        this.w = w;
    }

    /** The accessors of field {@code f} of struct {@code s}; {@code methods}: the names taken so far in the struct. */
    void write(final FieldSpec f, final StructSpec s, final Set<String> methods)
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
