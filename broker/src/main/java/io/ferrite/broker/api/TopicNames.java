package io.ferrite.broker.api;

/** Kafka's rules for topic names. */
public final class TopicNames
{
    /** Kafka's limit: a partition directory name must stay under 255 characters. */
    static final int MAX_LENGTH = 249;

    /**
     * Kafka's KRaft metadata log's name: never a topic here (its directory, when Ferrite starts on a Kafka log
     * directory, is Kafka's and left alone), never created (as Kafka 4.4's controller refuses it) nor auto-created.
     */
    public static final String KAFKA_METADATA = "__cluster_metadata";

    private TopicNames()
    {
    }

    /** Why {@code name} is not a legal topic name (Kafka's message), or null when it is. */
    public static String illegal(final String name)
    {
        if (name == null || name.isEmpty())
        {
            return "Topic name is illegal, it can't be empty";
        }
        if (name.equals(".") || name.equals(".."))
        {
            return "Topic name cannot be \".\" or \"..\"";
        }
        if (name.length() > MAX_LENGTH)
        {
            return "Topic name is illegal, it can't be longer than " + MAX_LENGTH + " characters, topic name: " + name;
        }
        for (int i = 0; i < name.length(); i++)
        {
            final char c = name.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            {
                return "Topic name \"" + name + "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'";
            }
        }
        return null;
    }
}
