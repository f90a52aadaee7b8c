package io.ferrite.wire.message;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;

/** Small helpers the generated JSON bridges call. */
final class JsonSupport
{
    private JsonSupport()
    {
    }

    static byte[] bytes(final JsonNode node)
    {
        try
        {
            return node.binaryValue();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** A decoder of a struct the message does not carry: every field reads as its default. */
    static <T extends StructDecoder> T defaults(final T decoder, final short version)
    {
        decoder.wrapDefaults(version);
        return decoder;
    }
}
