package io.ferrite.broker.txn;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The bytes a produce's question adds to an AddPartitionsToTxn v5 and its answer ({@link RemoteVerifier#bytes}): 40 and
 * 3 a char of the transactional id, 11 a partition, and each distinct topic's name once (20 and 3 a char), whether its
 * partitions come together or not (review L3: counted without a set).
 */
class RemoteVerifierBytesTest
{
    @Test
    void eachTopicsNameIsCountedOnceWhereverItsPartitionsAre()
    {
        assertEquals(40 + 3 + 11 + 20 + 3, RemoteVerifier.bytes("t", new String[] {"a"}), "one partition");
        assertEquals(40 + 3 + 3 * 11 + 20 + 3, RemoteVerifier.bytes("t", new String[] {"a", "a", "a"}), "one topic");
        assertEquals(40 + 3 + 4 * 11 + (20 + 3) + (20 + 6), RemoteVerifier.bytes("t", new String[] {"a", "a", "bb", "bb"}),
            "two topics, together");
        assertEquals(40 + 3 + 4 * 11 + (20 + 3) + (20 + 6), RemoteVerifier.bytes("t", new String[] {"a", "bb", "a", "bb"}),
            "two topics, interleaved");
        assertEquals(40 + 3 + 2 * 11 + (20 + 3), RemoteVerifier.bytes("t", new String[] {"a", new String("a")}),
            "equal names, not the same string");
    }
}
