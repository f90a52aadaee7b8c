package io.ferrite.client;

/**
 * Settings that contradict each other, thrown by {@link Producer}'s constructor with the message
 * kafka-clients' {@code ConfigException} has for the same conflict.
 */
public final class ConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    public ConfigException(final String message)
    {
        super(message);
    }
}
