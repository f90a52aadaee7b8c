package io.ferrite.broker;

import java.io.IOException;

/**
 * A start that failed through something the user can put right (a port in use, a data directory
 * that is a file or not writable, a {@code meta.properties} that does not fit): the message is one
 * line naming the setting or file, and {@code ferrite-server} prints only that line and exits 1.
 * Failures of Ferrite itself stay ordinary exceptions with their stack traces.
 */
public final class StartupException extends IOException
{
    private static final long serialVersionUID = 1L;

    public StartupException(final String message)
    {
        super(message);
    }

    public StartupException(final String message, final Throwable cause)
    {
        super(message, cause);
    }

    /** What the operating system said, without the exception's class name (AccessDeniedException has no reason). */
    public static String reason(final Throwable ex)
    {
        if (ex instanceof java.nio.file.FileSystemException fs && fs.getReason() != null)
        {
            return fs.getReason();
        }
        if (ex instanceof java.nio.file.AccessDeniedException)
        {
            return "permission denied";
        }
        if (ex instanceof java.nio.file.NoSuchFileException)
        {
            return "no such file or directory";
        }
        if (ex instanceof java.nio.file.FileAlreadyExistsException)
        {
            return "a file of that name exists";
        }
        if (ex instanceof java.nio.charset.CharacterCodingException)
        {
            return "not UTF-8 text";
        }
        return ex.getMessage() != null ? ex.getMessage() : ex.getClass().getSimpleName();
    }
}
