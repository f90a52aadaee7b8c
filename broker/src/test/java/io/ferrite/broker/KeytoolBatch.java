package io.ferrite.broker;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a list of {@code keytool} commands in one child JVM, in order: the JDK's keytool ({@code sun.security.tools.keytool.Main},
 * not exported: the child is started with {@code --add-exports}) called once per command, as the {@code keytool} launcher
 * calls it. A failed command ends the child with keytool's own exit status and message (keytool exits on an error), and
 * the commands after it are not run. One JVM start instead of one per command: the JVM starts were nearly all of the
 * time {@link TestCertificates} took.
 */
public final class KeytoolBatch
{
    private static final String KEYTOOL = "sun.security.tools.keytool.Main";
    /** Between two commands in the commands file (an argument is one line; no keytool argument here is empty). */
    private static final String END_OF_COMMAND = "";
    /** The child's last line, followed by how many commands it ran. */
    private static final String DONE = "keytool commands run: ";

    private KeytoolBatch()
    {
    }

    /** Runs {@code commands} (each keytool's arguments) in one child JVM, its files in {@code dir}; throws naming the failure. */
    static void run(final Path dir, final List<List<String>> commands) throws IOException, InterruptedException
    {
        final List<String> lines = new ArrayList<>();
        for (final List<String> command : commands)
        {
            for (final String arg : command)
            {
                if (arg.isEmpty() || arg.contains("\n"))
                {
                    throw new IllegalArgumentException("an argument the commands file cannot hold: \"" + arg + "\" in " + command);
                }
            }
            lines.addAll(command);
            lines.add(END_OF_COMMAND);
        }
        final Path file = dir.resolve("keytool-commands.txt");
        Files.write(file, lines, StandardCharsets.UTF_8);
        final Path output = dir.resolve("keytool-output.txt");
        // stdin from /dev/null: a command that prompts (no -noprompt, no -storepass) fails instead of waiting forever;
        // the output to a file, so nothing blocks on reading it and the bound below can fire
        final Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports", "java.base/sun.security.tools.keytool=ALL-UNNAMED",
            "-cp", classes().toString(),
            KeytoolBatch.class.getName(), file.toString())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS))
        {
            p.destroyForcibly().waitFor();
            throw new IOException("the " + commands.size() + " keytool commands did not end within 120 s: " + new String(Files.readAllBytes(output), StandardCharsets.UTF_8));
        }
        final String out = new String(Files.readAllBytes(output), StandardCharsets.UTF_8);
        if (p.exitValue() != 0)
        {
            throw new IOException("a keytool command failed (exit " + p.exitValue() + "): " + out);
        }
        // a command that ends the JVM with status 0 (System.exit inside keytool) would skip the rest unseen
        if (!out.endsWith(DONE + commands.size() + System.lineSeparator()))
        {
            throw new IOException("the child did not report all " + commands.size() + " keytool commands run: " + out);
        }
    }

    /** Where this class was loaded from (the module's test classes): the child's whole class path. */
    private static Path classes() throws IOException
    {
        try
        {
            return Path.of(KeytoolBatch.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (final java.net.URISyntaxException ex)
        {
            throw new IOException(ex);
        }
    }

    /** The child: args[0] is the commands file. */
    public static void main(final String[] args) throws Exception
    {
        final List<String> command = new ArrayList<>();
        int ran = 0;
        for (final String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8))
        {
            if (!line.equals(END_OF_COMMAND))
            {
                command.add(line);
                continue;
            }
            System.out.println("keytool " + String.join(" ", command));
            try
            {
                Class.forName(KEYTOOL).getMethod("main", String[].class).invoke(null, (Object)command.toArray(new String[0]));
            }
            catch (final InvocationTargetException ex)
            {
                ex.getCause().printStackTrace(System.out);
                System.exit(1);
            }
            command.clear();
            ran++;
        }
        System.out.println(DONE + ran);
    }
}
