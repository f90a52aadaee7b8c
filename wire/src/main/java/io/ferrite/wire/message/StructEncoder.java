package io.ferrite.wire.message;

/**
 * Base of the generated encoders: writes one struct of a Kafka message front to back.
 *
 * <p>Setters are called in the order the fields are encoded: the regular fields in schema order,
 * then the tagged fields by tag. A setter may skip fields, which are then written with their
 * defaults; going back throws {@link IllegalStateException}, as it would otherwise corrupt the
 * message. A struct or array field returns the nested encoder, which stays open until its parent
 * writes its next field or finishes; the elements of an array start with {@code next()}.
 *
 * <p>Fields the version does not have are not written; a non-default value for one throws
 * (unless the schema calls it ignorable), as Kafka's own classes do. Not thread-safe; nothing here
 * allocates.
 */
public abstract class StructEncoder implements NestedEncoder
{
    private static final int NONE = 0;
    private static final int SINGLE = 1;
    private static final int ARRAY = 2;

    protected final EncodeCursor out;
    private final int taggedField;
    private final int endField;

    private int next;
    private boolean open;
    private NestedEncoder openChild;
    private int taggedCountAt = -1;
    private int taggedCount;

    private int mode = NONE;
    private int declared;
    private int written;
    private int sizeAt = -1;
    private int discardFrom = -1;
    private int messageStart;

    /**
     * @param taggedField index of the pseudo-field where the tagged-field section begins
     * @param endField    index one past the last field
     */
    protected StructEncoder(final EncodeCursor out, final int taggedField, final int endField)
    {
        this.out = out;
        this.taggedField = taggedField;
        this.endField = endField;
    }

    /** Whether the version uses compact encodings and a tagged-field section. */
    protected abstract boolean flexible(short version);

    /** Writes the default of {@code field} by calling its setter (nothing for a tagged field). */
    protected abstract void writeDefault(int field);

    /** Moves to {@code field}: closes an open nested encoder and writes defaults for skipped fields. */
    protected final void field(final int field)
    {
        if (!open)
        {
            throw notOpen(getClass(), mode == ARRAY);
        }
        if (field < next)
        {
            throw outOfOrder(getClass(), field, next - 1);
        }
        closeChild();
        while (next < field)
        {
            final int skipped = next;
            if (skipped == taggedField)
            {
                beginTaggedFields();
            }
            else
            {
                writeDefault(skipped);
                closeChild();
            }
            if (next == skipped)
            {
                next = skipped + 1;
            }
        }
        next = field + 1;
    }

    /** Records the encoder now open under {@code field}; it is closed when this one moves on. */
    protected final <T extends NestedEncoder> T open(final T child)
    {
        openChild = child;
        return child;
    }

    private void closeChild()
    {
        final NestedEncoder child = openChild;
        if (child != null)
        {
            openChild = null;
            child.closeNested();
        }
    }

    /** Writes a tagged field's tag and a placeholder for its size; the caller patches the size after the value. */
    protected final int beginTagged(final int tag)
    {
        out.putUnsignedVarint(tag);
        taggedCount++;
        return out.reserveByte();
    }

    private void beginTaggedFields()
    {
        if (flexible(out.version()))
        {
            // fewer than 128 tagged fields per struct (checked by the generator): one byte for the count
            taggedCountAt = out.reserveByte();
        }
    }

    // ---- element lifecycle ----

    protected final void beginElement()
    {
        next = 0;
        open = true;
        openChild = null;
        taggedCountAt = -1;
        taggedCount = 0;
    }

    /** Finishes the current element: defaults for the fields not written, then the tagged-field count. */
    protected final void closeElement()
    {
        if (!open)
        {
            return;
        }
        field(endField);
        if (taggedCountAt >= 0)
        {
            out.buffer().putByte(taggedCountAt, (byte)taggedCount);
        }
        open = false;
    }

    /** Starts this encoder as the value of a struct field (tagged when {@code sizeAt >= 0}). */
    final void beginSingle(final int sizeAt, final int discardFrom)
    {
        this.mode = SINGLE;
        this.sizeAt = sizeAt;
        this.discardFrom = discardFrom;
        beginElement();
    }

    /** Starts this encoder as the elements of an array field; each element begins with {@link #nextElement()}. */
    final void beginArray(final int count, final int sizeAt, final int discardFrom)
    {
        this.mode = ARRAY;
        this.declared = count;
        this.written = 0;
        this.sizeAt = sizeAt;
        this.discardFrom = discardFrom;
        this.open = false;
    }

    protected final void nextElement()
    {
        if (mode != ARRAY)
        {
            throw notElement(getClass());
        }
        closeElement();
        if (written == declared)
        {
            throw tooMany(getClass().getSimpleName(), declared);
        }
        written++;
        beginElement();
    }

    @Override
    public final void closeNested()
    {
        closeElement();
        if (mode == ARRAY && written != declared)
        {
            throw tooFew(getClass().getSimpleName(), declared, written);
        }
        if (sizeAt >= 0)
        {
            out.patchSize(sizeAt);
        }
        if (discardFrom >= 0)
        {
            out.position(discardFrom);
        }
        mode = NONE;
    }

    // ---- top level ----

    protected final void beginMessage(final int offset)
    {
        this.mode = NONE;
        this.sizeAt = -1;
        this.discardFrom = -1;
        this.messageStart = offset;
        beginElement();
    }

    /** Finishes the message; returns its length in bytes. */
    protected final int finishMessage()
    {
        closeElement();
        return out.position() - messageStart;
    }

    // the messages of the exceptions above, built out of the methods they guard (they stay small enough to inline)

    private static IllegalStateException outOfOrder(final Class<?> type, final int field, final int previous)
    {
        return new IllegalStateException(type.getSimpleName() + ": field " + field + " written after field " + previous +
            "; write fields in order");
    }

    static IllegalStateException tooMany(final String what, final int declared)
    {
        return new IllegalStateException(what + ": more than the " + declared + " elements declared");
    }

    static IllegalStateException tooFew(final String what, final int declared, final int written)
    {
        return new IllegalStateException(what + ": " + declared + " elements declared, " + written + " written");
    }

    private static IllegalStateException notOpen(final Class<?> type, final boolean array)
    {
        return new IllegalStateException(type.getSimpleName() + (array ? ": call next() before writing an element" : ": not open"));
    }

    private static IllegalStateException notElement(final Class<?> type)
    {
        return new IllegalStateException(type.getSimpleName() + " is not an array element");
    }
}
