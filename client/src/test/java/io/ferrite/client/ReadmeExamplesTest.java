package io.ferrite.client;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's "Use it from an application" examples compile against the client as it is: each {@code java} block of
 * that section becomes a method of a class (the names they take as given — {@code running}, {@code process},
 * {@code handler}, {@code lastProcessedOffset} — are its fields and method), compiled with the JDK's compiler against
 * the client, wire and Agrona. An example that no longer compiles (a renamed method, a listener method added without a
 * default) fails here.
 */
class ReadmeExamplesTest
{
    private static final String SECTION = "## Use it from an application";

    @Test
    void theExamplesCompile() throws Exception
    {
        final String readme = Files.readString(Path.of("README.md"));
        final int start = readme.indexOf(SECTION);
        assertTrue(start >= 0, "README.md has no section " + SECTION);
        final int end = readme.indexOf("\n## ", start + SECTION.length());
        final String section = readme.substring(start, end < 0 ? readme.length() : end);
        final List<String> blocks = new ArrayList<>();
        final Matcher m = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(section);
        while (m.find())
        {
            blocks.add(m.group(1));
        }
        assertTrue(blocks.size() >= 2, "a producer and a consumer example: " + blocks.size() + " blocks");
        final StringBuilder source = new StringBuilder("""
            package readme;
            import io.ferrite.client.*;
            import org.agrona.concurrent.UnsafeBuffer;
            import java.util.List;
            class Examples
            {
                boolean running;
                long lastProcessedOffset;
                RecordHandler handler;
                void process(long offset, long timestamp, org.agrona.DirectBuffer buffer, int at, int length) { }
            """);
        for (int i = 0; i < blocks.size(); i++)
        {
            source.append("void example").append(i).append("() throws Exception\n{\n").append(blocks.get(i)).append("}\n");
        }
        source.append("}\n");

        final JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertNotNull(compiler, "the tests run on a JDK");
        final Path out = Files.createTempDirectory("readme-examples");
        final String classPath = String.join(File.pathSeparator, location(Producer.class), location(DirectBuffer.class),
            location(io.ferrite.wire.record.Record.class));
        final DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        final JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///readme/Examples.java"), JavaFileObject.Kind.SOURCE)
        {
            @Override
            public CharSequence getCharContent(final boolean ignoreEncodingErrors)
            {
                return source;
            }
        };
        final boolean compiled = compiler.getTask(null, null, diagnostics, List.of("-d", out.toString(), "-cp", classPath,
            "-proc:none"), null, List.of(file)).call();
        final StringBuilder errors = new StringBuilder();
        for (final Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics())
        {
            errors.append(d.getKind()).append(" line ").append(d.getLineNumber()).append(": ").append(d.getMessage(null)).append('\n');
        }
        assertTrue(compiled, errors + "\n" + source);
        assertTrue(Files.isRegularFile(out.resolve("readme/Examples.class")));
    }

    private static String location(final Class<?> type) throws Exception
    {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
