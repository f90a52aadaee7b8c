package io.ferrite.replication;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/** What a node costs, for the README's figures: OS threads and RSS of this process, and its Java threads by role. */
final class ProcessCost
{
    private ProcessCost()
    {
    }

    /** {@code threads=N rssKiB=R controller=a view=b broker=c quorum=q other=o}, from /proc/self/status and the JVM. */
    static String describe() throws IOException
    {
        String threads = "?";
        String rss = "?";
        for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
        {
            if (line.startsWith("Threads:"))
            {
                threads = line.substring(8).trim();
            }
            else if (line.startsWith("VmRSS:"))
            {
                rss = line.substring(6).replace("kB", "").trim();
            }
        }
        final Map<String, Integer> roles = new TreeMap<>();
        for (final Thread thread : Thread.getAllStackTraces().keySet())
        {
            final String name = thread.getName();
            final String role = name.startsWith("controller-") ? "controller" : name.startsWith("view-") ? "view" :
                name.startsWith("broker-") ? "broker" : name.startsWith("quorum-") || name.startsWith("raft-") ? "quorum" : "other";
            roles.merge(role, 1, Integer::sum);
        }
        final StringBuilder out = new StringBuilder("threads=" + threads + " rssKiB=" + rss);
        roles.forEach((role, count) -> out.append(' ').append(role).append('=').append(count));
        return out.toString();
    }
}
