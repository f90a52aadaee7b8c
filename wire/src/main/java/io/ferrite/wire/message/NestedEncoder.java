package io.ferrite.wire.message;

/** An encoder opened by a parent field (a struct, an array); the parent closes it when it moves on. */
interface NestedEncoder
{
    void closeNested();
}
