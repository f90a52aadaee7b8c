package io.ferrite.codegen;

import java.util.List;
import java.util.TreeMap;

/**
 * Writes {@code GroupRecordTypes}: the name and the highest value version of every record type the
 * group coordinator's schemas declare (the "apiKey" of each {@code coordinator-key} schema, which a
 * {@code __consumer_offsets} key's first two bytes hold), so that a loader can tell a record type it
 * does not use (skipped and counted by name) from one no Kafka of this version writes, and a value
 * version from the future.
 */
final class RecordTypesGenerator
{
    private RecordTypesGenerator()
    {
    }

    static String generate(final List<MessageSpec> groupRecords)
    {
        final TreeMap<Integer, String> names = new TreeMap<>();
        final TreeMap<Integer, Integer> highest = new TreeMap<>();
        for (final MessageSpec m : groupRecords)
        {
            if ("coordinator-key".equals(m.type()))
            {
                names.put(m.apiKey(), m.name().substring(0, m.name().length() - "Key".length()));
            }
            else if ("coordinator-value".equals(m.type()))
            {
                highest.put(m.apiKey(), (int)m.valid().highest());
            }
        }
        final int size = names.isEmpty() ? 0 : names.lastKey() + 1;
        final JavaWriter w = new JavaWriter();
        w.line("package io.ferrite.wire.message;");
        w.blank();
        w.line("/**");
        w.line(" * The record types of {@code __consumer_offsets} as Kafka's group coordinator declares them (the");
        w.line(" * first two bytes of a key), with the highest value version of each.");
        w.line(" * Generated at build time from the schemas in kafka-group-coordinator; not checked in.");
        w.line(" */");
        w.line("public final class GroupRecordTypes {");
        w.line("private static final String[] NAMES = {");
        for (int t = 0; t < size; t++)
        {
            w.line("%s,", names.containsKey(t) ? "\"" + names.get(t) + "\"" : "null");
        }
        w.line("};");
        w.line("private static final short[] HIGHEST_VALUE_VERSION = {");
        for (int t = 0; t < size; t++)
        {
            w.line("%d,", highest.getOrDefault(t, -1));
        }
        w.line("};");
        w.blank();
        w.line("private GroupRecordTypes() {");
        w.line("}");
        w.blank();
        w.line("/** The name of record type {@code type} (its key schema's, without \"Key\"), or null: a type Kafka does not declare. */");
        w.line("public static String name(final int type) {");
        w.line("return type >= 0 && type < NAMES.length ? NAMES[type] : null;");
        w.line("}");
        w.blank();
        w.line("/** The highest value version of record type {@code type}, or -1: a type Kafka does not declare. */");
        w.line("public static short highestValueVersion(final int type) {");
        w.line("return type >= 0 && type < HIGHEST_VALUE_VERSION.length ? HIGHEST_VALUE_VERSION[type] : -1;");
        w.line("}");
        w.line("}");
        return w.toString();
    }
}
