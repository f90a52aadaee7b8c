package io.ferrite.codegen;

import java.util.List;

/** Writes the test-only {@code MessageCodecs}: decode and encode any message by name through its JSON bridge. */
final class RegistryGenerator
{
    static String generate(final List<MessageSpec> specs)
    {
        final JavaWriter w = new JavaWriter();
        w.line("package io.ferrite.wire.message;");
        w.blank();
        w.line("import com.fasterxml.jackson.databind.JsonNode;");
        w.line("import com.fasterxml.jackson.databind.node.ObjectNode;");
        w.line("import org.agrona.DirectBuffer;");
        w.line("import org.agrona.MutableDirectBuffer;");
        w.blank();
        w.line("/** Test dispatch over every generated codec, by message name. Generated. */");
        w.line("public final class MessageCodecs {");
        w.line("private MessageCodecs() {");
        w.line("}");
        w.blank();
        w.line("/** Wraps {@code buffer} with the message's decoder and returns its JSON; sets {@code end[0]} to the end offset. */");
        w.line("public static ObjectNode decode(final String message, final DirectBuffer buffer, final int offset, final int limit, final short version, final int[] end) {");
        w.line("switch (message) {");
        for (final MessageSpec m : specs)
        {
            w.line("case \"%s\": {", m.name());
            w.line("final %s d = new %s();", m.decoderName(), m.decoderName());
            w.line("end[0] = d.wrap(buffer, offset, limit, version);");
            w.line("return %s.read%s(d, version);", JsonBridgeGenerator.className(m), m.name());
            w.line("}");
        }
        w.line("default:");
        w.line("throw new IllegalArgumentException(message);");
        w.line("}");
        w.line("}");
        w.blank();
        w.line("/** Wraps {@code buffer} only (no accessors); returns the end offset. */");
        w.line("public static int wrapOnly(final String message, final DirectBuffer buffer, final int offset, final int limit, final short version) {");
        w.line("switch (message) {");
        for (final MessageSpec m : specs)
        {
            w.line("case \"%s\":", m.name());
            w.line("return new %s().wrap(buffer, offset, limit, version);", m.decoderName());
        }
        w.line("default:");
        w.line("throw new IllegalArgumentException(message);");
        w.line("}");
        w.line("}");
        w.blank();
        w.line("/** Encodes the message from its JSON at {@code offset}; returns its length. */");
        w.line("public static int encode(final String message, final JsonNode json, final MutableDirectBuffer buffer, final int offset, final short version) {");
        w.line("switch (message) {");
        for (final MessageSpec m : specs)
        {
            w.line("case \"%s\": {", m.name());
            w.line("final %s e = new %s().wrap(buffer, offset, version);", m.encoderName(), m.encoderName());
            w.line("%s.write%s(json, e, version);", JsonBridgeGenerator.className(m), m.name());
            w.line("return e.finish();");
            w.line("}");
        }
        w.line("default:");
        w.line("throw new IllegalArgumentException(message);");
        w.line("}");
        w.line("}");
        w.line("}");
        return w.toString();
    }
}
