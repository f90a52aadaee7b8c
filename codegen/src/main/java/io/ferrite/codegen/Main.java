package io.ferrite.codegen;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Build-time entry point: {@code Main <main-sources-dir> <test-sources-dir>}. Reads every schema
 * from kafka-clients on the class path and writes the decoders, encoders and {@code ApiKeys} into
 * the first directory and the JSON bridges used by the cross-validation tests into the second; then
 * the decoders of the coordinator records Ferrite reads (from kafka-group-coordinator and
 * kafka-transaction-coordinator on the class path) and the names of every record type those jars
 * declare, into the first directory.
 */
public final class Main
{
    private static final String PACKAGE_DIR = "io/ferrite/wire/message";

    /**
     * The coordinator records Ferrite reads ({@code __consumer_offsets}: a committed offset, a classic
     * group's metadata; {@code __transaction_state}): a decoder each. Record types 0 and 1 share
     * OffsetCommitKey's layout (Kafka's LegacyOffsetCommitKey is its documentation), and their values
     * are OffsetCommitValue's versions. The group coordinator's other record types get a name only ({@code GroupRecordTypes}):
     * the loaders skip and count them.
     */
    private static final List<String> DECODED_RECORDS = List.of(
        "OffsetCommitKey", "OffsetCommitValue", "GroupMetadataKey", "GroupMetadataValue", "TransactionLogKey",
        "TransactionLogValue");

    private Main()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        if (args.length != 2)
        {
            throw new IllegalArgumentException("usage: Main <main-sources-dir> <test-sources-dir>");
        }
        final Path main = Path.of(args[0]).resolve(PACKAGE_DIR);
        final Path test = Path.of(args[1]).resolve(PACKAGE_DIR);
        Files.createDirectories(main);
        Files.createDirectories(test);

        final List<MessageSpec> specs = SchemaLoader.loadFromClasspath();
        for (final MessageSpec m : specs)
        {
            write(main.resolve(m.decoderName() + ".java"), new DecoderGenerator(m).generate());
            write(main.resolve(m.encoderName() + ".java"), new EncoderGenerator(m).generate());
            write(test.resolve(JsonBridgeGenerator.className(m) + ".java"), new JsonBridgeGenerator(m).generate());
        }
        write(main.resolve("ApiKeys.java"), ApiKeysGenerator.generate(specs));
        write(test.resolve("MessageCodecs.java"), RegistryGenerator.generate(specs));
        System.out.println("ferrite-codegen: " + specs.size() + " message schemas -> " + main + ", " + test);

        // the record decoders go beside the message codecs: StructDecoder re-points nested decoders through protected members
        final List<MessageSpec> groupSpecs = new ArrayList<>(SchemaLoader.loadFromJarOf("OffsetCommitValue.json", "kafka-group-coordinator"));
        groupSpecs.removeIf(m -> !m.isCoordinatorRecord());
        final List<MessageSpec> recordSpecs = new ArrayList<>(groupSpecs);
        recordSpecs.addAll(SchemaLoader.loadFromJarOf("TransactionLogValue.json", "kafka-transaction-coordinator"));
        recordSpecs.removeIf(m -> !m.isCoordinatorRecord());
        for (final String name : DECODED_RECORDS)
        {
            final MessageSpec m = recordSpecs.stream().filter(s -> s.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no coordinator record schema " + name));
            write(main.resolve(m.decoderName() + ".java"), new DecoderGenerator(m).generate());
        }
        write(main.resolve("GroupRecordTypes.java"), RecordTypesGenerator.generate(groupSpecs));
        System.out.println("ferrite-codegen: " + DECODED_RECORDS.size() + " of " + recordSpecs.size() + " coordinator record schemas -> "
            + main);
    }

    /** Writes only when the content changed, so incremental compilation stays incremental. */
    private static void write(final Path file, final String content) throws IOException
    {
        final byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        if (Files.exists(file) && java.util.Arrays.equals(Files.readAllBytes(file), bytes))
        {
            return;
        }
        Files.write(file, bytes);
    }
}
