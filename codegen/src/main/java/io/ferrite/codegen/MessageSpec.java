package io.ferrite.codegen;

import java.util.List;
import java.util.Map;

/**
 * One schema file: a request, response, header or data message.
 *
 * @param name                  e.g. {@code ProduceRequest}
 * @param type                  {@code request}, {@code response}, {@code header} or {@code data}
 * @param apiKey                the API key of a request or response, else -1
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
