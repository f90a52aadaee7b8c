package io.ferrite.broker;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link FerriteServer#plainOptions}, the start's parse without picocli (issue 17): the options it takes are those
 * picocli's parse of the annotated class gives, and everything else is left to picocli.
 */
class FerriteServerOptionsTest
{
    @Test
    void plainArgumentsParseAsPicocliParsesThem()
    {
        final List<String[]> cases = List.of(
            new String[] {},
            new String[] {"--config", "server.properties"},
            new String[] {"--config=/etc/ferrite/server.properties"},
            new String[] {"--override", "node.id=3"},
            new String[] {"--override=log.dirs=/tmp/a=b", "--override", "listeners=PLAINTEXT://127.0.0.1:0"},
            new String[] {"--override", "num.partitions=1", "--config", "x.properties", "--override", "node.id=2"},
            new String[] {"--override", "no-equals-sign"},
            new String[] {"--config", "a b/server properties"});
        for (final String[] args : cases)
        {
            final FerriteServer plain = FerriteServer.plainOptions(args);
            assertNotNull(plain, String.join(" ", args));
            final FerriteServer picocli = new FerriteServer();
            new CommandLine(picocli).parseArgs(args);
            assertEquals(picocli.config, plain.config, "--config of " + String.join(" ", args));
            assertEquals(picocli.overrides, plain.overrides, "--override of " + String.join(" ", args));
        }
        assertEquals(Path.of("server.properties"), FerriteServer.plainOptions(new String[] {"--config", "server.properties"}).config);
    }

    @Test
    void everythingElseIsLeftToPicocli()
    {
        final List<String[]> cases = List.of(
            new String[] {"--help"},
            new String[] {"-h"},
            new String[] {"--version"},
            new String[] {"-V"},
            new String[] {"--confg", "server.properties"},
            new String[] {"--config"},
            new String[] {"--override"},
            new String[] {"--config="},
            new String[] {"--config", "a", "--config", "b"},
            new String[] {"--override", "--help"},
            new String[] {"--override", "-x=1"},
            new String[] {"@args.txt"},
            new String[] {"--config", "@args.txt"},
            new String[] {"--override", "a=1", "extra"},
            new String[] {"--", "--override", "a=1"});
        for (final String[] args : cases)
        {
            assertNull(FerriteServer.plainOptions(args), String.join(" ", args));
        }
    }
}
