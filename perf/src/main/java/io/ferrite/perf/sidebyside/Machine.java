package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** What the runners record of the machine they ran on: its CPU and the load other work put on it. */
public final class Machine
{
    private Machine()
    {
    }

    /** The 1-, 5- and 15-minute load averages as {@code uptime} prints them ("0.20 1.49 2.24"), or "?" without /proc. */
    public static String loadAverages()
    {
        try
        {
            final String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        }
        catch (final IOException ex)
        {
            return "?";
        }
    }

    /** The 1-minute load average alone. */
    static String loadAverage()
    {
        return loadAverages().split(" ")[0];
    }

    /** The CPU's model name from /proc/cpuinfo, or the architecture elsewhere. */
    static String cpuModel()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/cpuinfo")))
            {
                if (line.startsWith("model name"))
                {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
        }
        catch (final IOException ex)
        {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    /**
     * What a runner's JSON says of its run ({@code meta}): date, commit ({@code -Dsidebyside.commit}), JDK, CPU,
     * cores, OS, the command and which Ferrite build ran; answers {@code meta}.
     */
    public static ObjectNode describeRun(final ObjectNode meta, final String command)
    {
        meta.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        meta.put("commit", System.getProperty("sidebyside.commit", "unknown"));
        meta.put("jdk", System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ")");
        meta.put("cpu", cpuModel());
        meta.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
        meta.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        meta.put("command", command.strip());
        final Path jar = BrokerProcess.ferriteJar();
        meta.put("ferrite", jar == null ? "FerriteServer on the runner's class path (no runnable jar built)" : jar.toString());
        return meta;
    }
}
