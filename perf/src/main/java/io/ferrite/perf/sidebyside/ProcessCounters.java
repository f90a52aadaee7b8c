package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What a broker process costs the machine at one moment, read from Linux's {@code /proc} and from
 * its data directory: open file descriptors, memory mappings, resident memory split into anonymous
 * and file-backed pages, and the disk its data directory takes. Every figure is -1 when it could not
 * be read (the process is gone, not Linux), so a run that lost its broker still records the rest.
 */
final class ProcessCounters
{
    /** One reading; bytes for sizes. */
    record Snapshot(String phase, boolean alive, long openFiles, long openFilesInData, long mappings, long mappingsOfData,
        long rss, long rssAnon, long rssFile, long diskAllocated, long diskApparent, long dataFiles)
    {
        void into(final ObjectNode node)
        {
            node.put("phase", phase);
            node.put("alive", alive);
            node.put("openFiles", openFiles);
            node.put("openFilesInDataDir", openFilesInData);
            node.put("mappings", mappings);
            node.put("mappingsOfDataDir", mappingsOfData);
            node.put("rssBytes", rss);
            node.put("rssAnonBytes", rssAnon);
            node.put("rssFileBytes", rssFile);
            node.put("diskAllocatedBytes", diskAllocated);
            node.put("diskApparentBytes", diskApparent);
            node.put("dataFiles", dataFiles);
        }
    }

    private ProcessCounters()
    {
    }

    static Snapshot read(final String phase, final long pid, final Path dataDir)
    {
        final Path proc = Path.of("/proc", Long.toString(pid));
        final boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        final String data = dataDir.toAbsolutePath().normalize().toString();
        long fds = -1;
        long fdsInData = -1;
        long maps = -1;
        long mapsOfData = -1;
        if (alive)
        {
            try (Stream<Path> links = Files.list(proc.resolve("fd")))
            {
                fds = 0;
                fdsInData = 0;
                for (final Path fd : (Iterable<Path>) links::iterator)
                {
                    fds++;
                    try
                    {
                        if (Files.readSymbolicLink(fd).toString().startsWith(data))
                        {
                            fdsInData++;
                        }
                    }
                    catch (final IOException ex)
                    {
                        // closed between the listing and the read: it no longer counts
                        fds--;
                    }
                }
            }
            catch (final IOException | UncheckedIOException ex)
            {
                fds = -1;
                fdsInData = -1;
            }
            try
            {
                final List<String> lines = Files.readAllLines(proc.resolve("maps"), StandardCharsets.UTF_8);
                maps = lines.size();
                mapsOfData = lines.stream().filter(l -> l.contains(data)).count();
            }
            catch (final IOException | UncheckedIOException ex)
            {
                maps = -1;
                mapsOfData = -1;
            }
        }
        final long[] disk = disk(dataDir);
        return new Snapshot(phase, alive, fds, fdsInData, maps, mapsOfData, alive ? status(proc, "VmRSS:") : -1,
            alive ? status(proc, "RssAnon:") : -1, alive ? status(proc, "RssFile:") : -1, disk[0], disk[1], disk[2]);
    }

    /** A size field of /proc/PID/status in bytes, or -1. */
    static long status(final Path proc, final String field)
    {
        try
        {
            for (final String line : Files.readAllLines(proc.resolve("status")))
            {
                if (line.startsWith(field))
                {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        }
        catch (final IOException | NumberFormatException ex)
        {
            return -1;
        }
        return -1;
    }

    /**
     * Allocated bytes (st_blocks x 512, as du counts them: what preallocation really costs, sparse
     * files cost only their written blocks), apparent bytes, and the number of regular files under
     * the directory. The JDK's "unix" attribute view has no st_blocks, hence du.
     */
    static long[] disk(final Path dir)
    {
        if (!Files.isDirectory(dir))
        {
            return new long[] {-1, -1, -1};
        }
        long files;
        try (Stream<Path> all = Files.walk(dir))
        {
            files = all.filter(Files::isRegularFile).count();
        }
        catch (final IOException | UncheckedIOException ex)
        {
            files = -1; // a file went away during the walk (a segment deleted, a checkpoint renamed)
        }
        return new long[] {du(dir, false), du(dir, true), files};
    }

    private static long du(final Path dir, final boolean apparent)
    {
        try
        {
            final List<String> command = apparent ? List.of("du", "-s", "-B1", "--apparent-size", dir.toString())
                : List.of("du", "-s", "-B1", dir.toString());
            final Process p = new ProcessBuilder(command).redirectErrorStream(false).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.getErrorStream().transferTo(java.io.OutputStream.nullOutputStream());
            if (!p.waitFor(60, TimeUnit.SECONDS))
            {
                p.destroyForcibly();
                return -1;
            }
            // du exits 1 when a file vanished during its walk, and still prints the sum of the rest
            return Long.parseLong(out.strip().split("\\s+")[0]);
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The soft and hard "Max open files" of a process, from /proc/PID/limits; {-1, -1} if unread. */
    static long[] openFileLimits(final long pid)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "limits")))
            {
                if (line.startsWith("Max open files"))
                {
                    final String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return new long[] {limit(f[0]), limit(f[1])};
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // not Linux
        }
        return new long[] {-1, -1};
    }

    private static long limit(final String s)
    {
        return "unlimited".equals(s) ? Long.MAX_VALUE : Long.parseLong(s);
    }

    /** vm.max_map_count: how many mappings one process may have; -1 if unread. */
    static long maxMapCount()
    {
        try
        {
            // read as lines: Files.readString answered "6" of "65530" here (procfs reports a size of 0)
            return Long.parseLong(Files.readAllLines(Path.of("/proc/sys/vm/max_map_count")).get(0).strip());
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }

    /** The command line a process was started with (/proc/PID/cmdline), to start it again the same way. */
    static List<String> commandLine(final long pid) throws IOException
    {
        final byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
        final String s = new String(raw, StandardCharsets.UTF_8);
        return List.of((s.endsWith("\0") ? s.substring(0, s.length() - 1) : s).split("\0", -1));
    }
}
