package io.ferrite.wire;

/**
 * Bytes from the network that do not form what the protocol says they should: a truncated field,
 * a length larger than what remains, a negative length, a null where none is allowed, a varint of
 * more than five bytes. Names the field at fault. The broker answers it by closing only the
 * connection that carried it.
 *
 * <p>Stackless: bad input can arrive in floods, and the field name says all a stack trace would.
 */
public final class ProtocolException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String field;

    public ProtocolException(final String field, final String message)
    {
        super(field + ": " + message, null, false, false);
        this.field = field;
    }

    /** The schema name of the field that could not be read. */
    public String field()
    {
        return field;
    }
}
