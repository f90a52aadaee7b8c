package io.ferrite.codegen;

/**
 * The type of a schema field: a primitive, a struct (named), or an array of either.
 */
public record FieldType(Kind kind, FieldType element, String structName)
{
    public enum Kind
    {
        BOOL(1), INT8(1), INT16(2), UINT16(2), INT32(4), UINT32(4), INT64(8), FLOAT64(8), UUID(16),
        STRING(-1), BYTES(-1), RECORDS(-1), STRUCT(-1), ARRAY(-1);

        /** Encoded width in bytes for fixed-size kinds, -1 otherwise. */
        public final int width;

        Kind(final int width)
        {
            this.width = width;
        }

        public boolean isFixed()
        {
            return width > 0;
        }
    }

    public static FieldType parse(final String text)
    {
        if (text.startsWith("[]"))
        {
            final FieldType element = parse(text.substring(2));
            if (element.kind == Kind.ARRAY || element.kind == Kind.RECORDS)
            {
                throw new IllegalArgumentException("unsupported array element type " + text);
            }
            return new FieldType(Kind.ARRAY, element, null);
        }
        switch (text)
        {
            case "bool": return of(Kind.BOOL);
            case "int8": return of(Kind.INT8);
            case "int16": return of(Kind.INT16);
            case "uint16": return of(Kind.UINT16);
            case "int32": return of(Kind.INT32);
            case "uint32": return of(Kind.UINT32);
            case "int64": return of(Kind.INT64);
            case "float64": return of(Kind.FLOAT64);
            case "uuid": return of(Kind.UUID);
            case "string": return of(Kind.STRING);
            case "bytes": return of(Kind.BYTES);
            case "records": return of(Kind.RECORDS);
            default:
                if (!Character.isUpperCase(text.charAt(0)))
                {
                    throw new IllegalArgumentException("unknown field type " + text);
                }
                return new FieldType(Kind.STRUCT, null, text);
        }
    }

    private static FieldType of(final Kind kind)
    {
        return new FieldType(kind, null, null);
    }

    public boolean isArray()
    {
        return kind == Kind.ARRAY;
    }

    public boolean isStruct()
    {
        return kind == Kind.STRUCT;
    }

    public boolean isStructArray()
    {
        return kind == Kind.ARRAY && element.kind == Kind.STRUCT;
    }

    /** String, bytes and records: a length prefix followed by that many bytes. */
    public boolean isVariableBytes()
    {
        return kind == Kind.STRING || kind == Kind.BYTES || kind == Kind.RECORDS;
    }

    /** The Java type of one value (fixed-size kinds only). */
    public String javaType()
    {
        switch (kind)
        {
            case BOOL: return "boolean";
            case INT8: return "byte";
            case INT16: return "short";
            case UINT16:
            case INT32: return "int";
            case UINT32:
            case INT64: return "long";
            case FLOAT64: return "double";
            default: throw new IllegalStateException("no single Java type for " + this);
        }
    }

    @Override
    public String toString()
    {
        switch (kind)
        {
            case ARRAY: return "[]" + element;
            case STRUCT: return structName;
            default: return kind.name().toLowerCase();
        }
    }
}
