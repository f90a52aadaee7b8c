package io.ferrite.codegen;

import java.util.List;
import java.util.Map;

/**
 * One schema file: a request, response, header or data message, or a coordinator record's key or value.
 *
 * @param name                  e.g. {@code ProduceRequest}
 * @param type                  {@code request}, {@code response}, {@code header}, {@code data}, or
 *                              {@code coordinator-key} / {@code coordinator-value} (an internal topic's records)
 * @param apiKey                the API key of a request or response, the record type of a coordinator record, else -1
 * @param valid                 the versions the schema declares valid
 * @param flexible              the versions with compact encodings and tagged fields
 * @param latestVersionUnstable whether the highest version is still unstable in Kafka
 * @param root                  the top-level struct (named like the message)
 * @param structs               every nested struct by name, in the order they appear
 */
public record MessageSpec(
    String name,
    String type,
    int apiKey,
    Versions valid,
    Versions flexible,
    boolean latestVersionUnstable,
    StructSpec root,
    Map<String, StructSpec> structs)
{
    public StructSpec struct(final String structName)
    {
        final StructSpec s = structs.get(structName);
        if (s == null)
        {
            throw new IllegalArgumentException(name + ": no struct " + structName);
        }
        return s;
    }

    public StructSpec structOf(final FieldSpec field)
    {
        final FieldType t = field.type().isArray() ? field.type().element() : field.type();
        return struct(t.structName());
    }

    public List<FieldSpec> fields()
    {
        return root.fields();
    }

    /**
     * Whether this is a key or value of a coordinator's internal topic ({@code __consumer_offsets},
     * {@code __transaction_state}): type {@code coordinator-key} or {@code coordinator-value}, whose
     * "apiKey" is the record type the key's first two bytes hold.
     */
    public boolean isCoordinatorRecord()
    {
        return type.startsWith("coordinator-");
    }

    /** The Kafka class that models this message in kafka-clients, e.g. {@code ProduceRequestData}. */
    public String kafkaDataClassName()
    {
        return "data".equals(type) ? name : name + "Data";
    }

    public String decoderName()
    {
        return name + "Decoder";
    }

    public String encoderName()
    {
        return name + "Encoder";
    }
}
