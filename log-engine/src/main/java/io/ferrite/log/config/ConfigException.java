package io.ferrite.log.config;

/** A configuration name or value that is not valid (Kafka answers INVALID_CONFIG). */
public final class ConfigException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String name;

    public ConfigException(final String name, final Object value, final String problem)
    {
        super("Invalid value " + value + " for configuration " + name + ": " + problem);
        this.name = name;
    }

    public ConfigException(final String message)
    {
        super(message);
        this.name = null;
    }

    /** The configuration at fault, when there is one. */
    public String configName()
    {
        return name;
    }
}
