package io.ferrite.broker.net;

/** A frame that breaks the protocol before its request can be read ({@link RequestFrames#completeFrame}): the connection closes. */
final class FrameException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    FrameException(final String message)
    {
        super(message, null, false, false);
    }
}
