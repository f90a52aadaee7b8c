package io.ferrite.log;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A log directory whose lock another process holds: two brokers (or a broker and a tool that
 * writes) on one directory would corrupt each other's segments, so the second one is refused. Its
 * own type so that a server can tell its user in one line which directory it is.
 */
public final class LogDirInUseException extends IOException
{
    private static final long serialVersionUID = 1L;

    private final transient Path dir;

    public LogDirInUseException(final Path dir)
    {
        super("log directory " + dir + " is in use by another process");
        this.dir = dir;
    }

    public Path dir()
    {
        return dir;
    }
}
