package io.ferrite.codegen;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Build-time entry point: {@code Main <main-sources-dir> <test-sources-dir>}. Reads every schema
 * from kafka-clients on the class path and writes the decoders, encoders and {@code ApiKeys} into
 * the first directory and the JSON bridges used by the cross-validation tests into the second.
 */
public final class Main
{
    private static final String PACKAGE_DIR = "io/ferrite/wire/message";

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
