package io.ferrite.broker.e2e;

import org.apache.kafka.common.utils.internals.Exit;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * A test's child JVM that runs Kafka 4.4's command-line tools ({@code kafka-configs.sh}'s ConfigCommand,
 * {@code kafka-acls.sh}'s AclCommand, ...) once per line of standard input, so that a test pays for one JVM and one
 * load of Kafka's classes instead of one per command (BrokerConfigsToolTest: 8 commands, 19 s of child JVMs before
 * issue 17's build work). A line is the tool's main class and its arguments, separated by tabs; the answer, one line
 * on standard output: its exit status, what it printed on standard output and on standard error (each Base64),
 * separated by tabs. {@code Exit.exit} (the tools' error path) ends the command with its status instead of the JVM, as
 * {@code kafka-run-class.sh} would end it with that status; a command that returns exits 0. {@link KafkaToolSession}
 * is the test's side.
 */
public final class KafkaToolChild
{
    private KafkaToolChild()
    {
    }

    /** The tool's call of {@code Exit.exit}: its status, thrown out of the command. */
    private static final class Exited extends RuntimeException
    {
        private static final long serialVersionUID = 1L;
        final int status;

        Exited(final int status)
        {
            super(null, null, false, false);
            this.status = status;
        }
    }

    public static void main(final String[] args) throws Exception
    {
        final PrintStream answers = System.out;
        Exit.setExitProcedure((status, message) ->
        {
            throw new Exited(status);
        });
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null)
        {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = 0;
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            final String[] fields = line.split("\t");
            try
            {
                Class.forName(fields[0]).getMethod("main", String[].class)
                    .invoke(null, (Object)java.util.Arrays.copyOfRange(fields, 1, fields.length));
            }
            catch (final InvocationTargetException e)
            {
                if (e.getCause() instanceof Exited exited)
                {
                    status = exited.status;
                }
                else
                {
                    e.getCause().printStackTrace(); // to the command's standard error, as an uncaught exception of the tool's JVM
                    status = 1;
                }
            }
            catch (final ReflectiveOperationException e)
            {
                e.printStackTrace(); // no such tool: the command fails
                status = 1;
            }
            finally
            {
                System.out.flush();
                System.err.flush();
                System.setOut(answers);
                System.setErr(new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true, StandardCharsets.UTF_8));
            }
            final Base64.Encoder b64 = Base64.getEncoder();
            answers.println(status + "\t" + b64.encodeToString(out.toByteArray()) + "\t" + b64.encodeToString(err.toByteArray()));
            answers.flush();
        }
    }
}
