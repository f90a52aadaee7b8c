package io.ferrite.codegen;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Derived facts about a message that the decoder, encoder and JSON bridge generators share. */
final class Model
{
    static final Set<String> JAVA_KEYWORDS = Set.of(
        "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "const", "continue",
        "default", "do", "double", "else", "enum", "extends", "final", "finally", "float", "for", "goto", "if",
        "implements", "import", "instanceof", "int", "interface", "long", "native", "new", "package", "private",
        "protected", "public", "return", "short", "static", "strictfp", "super", "switch", "synchronized", "this",
        "throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false", "null", "var", "record",
        "yield");

    final MessageSpec message;

    Model(final MessageSpec message)
    {
        this.message = message;
    }

    /** The root struct followed by every nested struct that can occur in some valid version. */
    List<StructSpec> structs()
    {
        final List<StructSpec> all = new ArrayList<>();
        all.add(message.root());
        for (final StructSpec s : message.structs().values())
        {
            if (!s.possible().isEmpty())
            {
                all.add(s);
            }
        }
        return all;
    }

    boolean isRoot(final StructSpec s)
    {
        return s == message.root();
    }

    /** Condition (over variable {@code v}) under which the field is on the wire. */
    String present(final FieldSpec f, final StructSpec s, final String v)
    {
        return f.presentIn(s.possible(), message.flexible()).condition(v, s.possible());
    }

    boolean presentAnywhere(final FieldSpec f, final StructSpec s)
    {
        return !f.presentIn(s.possible(), message.flexible()).isEmpty();
    }

    String flexible(final StructSpec s, final String v)
    {
        return message.flexible().condition(v, s.possible());
    }

    boolean flexibleAnywhere(final StructSpec s)
    {
        return !message.flexible().intersect(s.possible()).isEmpty();
    }

    String compact(final FieldSpec f, final StructSpec s, final String v)
    {
        return f.compactIn(message.flexible()).condition(v, s.possible());
    }

    String nullable(final FieldSpec f, final StructSpec s, final String v)
    {
        return f.nullable().condition(v, s.possible());
    }

    boolean nullableAnywhere(final FieldSpec f, final StructSpec s)
    {
        return !f.nullable().intersect(f.presentIn(s.possible(), message.flexible())).isEmpty();
    }

    /**
     * The fields that can be on the wire in some version: regular ones in schema order, then tagged
     * ones by tag. The order the encoder writes.
     */
    List<FieldSpec> encodeOrder(final StructSpec s)
    {
        final List<FieldSpec> regular = new ArrayList<>();
        final List<FieldSpec> tagged = new ArrayList<>();
        for (final FieldSpec f : s.fields())
        {
            if (presentAnywhere(f, s))
            {
                (f.isTagged() ? tagged : regular).add(f);
            }
        }
        tagged.sort(Comparator.comparingInt(FieldSpec::tag));
        final Set<Integer> tags = new HashSet<>();
        for (final FieldSpec f : tagged)
        {
            if (!tags.add(f.tag()))
            {
                throw new IllegalArgumentException(s.name() + ": tag " + f.tag() + " used twice");
            }
        }
        if (tagged.size() > 127)
        {
            throw new IllegalArgumentException(s.name() + ": more than 127 tagged fields");
        }
        regular.addAll(tagged);
        return regular;
    }

    /** Records default to null in Kafka's classes; bytes to empty unless the schema says null. */
    static boolean defaultNull(final FieldSpec f)
    {
        return f.defaultIsNull() || (f.type().kind() == FieldType.Kind.RECORDS && f.defaultValue() == null);
    }

    static String constant(final FieldSpec f)
    {
        return "F_" + Names.upperSnake(f.name());
    }

    static String checkName(final String structName, final String name, final Set<String> taken)
    {
        if (JAVA_KEYWORDS.contains(name) || !taken.add(name))
        {
            throw new IllegalArgumentException(structName + ": generated member name '" + name + "' collides");
        }
        return name;
    }
}
