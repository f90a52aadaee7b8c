package io.ferrite.codegen;

import java.util.List;

/**
 * A struct: the top level of a message, a struct defined inline by a field, or a common struct.
 *
 * @param name     the struct's type name, e.g. {@code TopicProduceData}
 * @param fields   its fields in wire order
 * @param possible the versions in which the struct can occur at all (narrowed by the fields that hold it)
 */
public record StructSpec(String name, List<FieldSpec> fields, Versions possible)
{
    public boolean hasTaggedFields()
    {
        for (final FieldSpec f : fields)
        {
            if (f.isTagged())
            {
                return true;
            }
        }
        return false;
    }

    public StructSpec withPossible(final Versions p)
    {
        return new StructSpec(name, fields, p);
    }
}
