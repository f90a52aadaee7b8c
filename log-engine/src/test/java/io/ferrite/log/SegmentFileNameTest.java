package io.ferrite.log;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SegmentFileNameTest
{
    @Test
    void namesAreTheOffsetInTwentyDigits()
    {
        for (final long offset : new long[] {0, 1, 9, 10, 123_456, 1L << 31, 99_999_999_999_999_999L, Long.MAX_VALUE})
        {
            assertEquals(String.format("%020d%s", offset, Segment.LOG_SUFFIX), Segment.fileName(offset, Segment.LOG_SUFFIX));
        }
        assertEquals("00000000000000000042.index", Segment.fileName(42, ".index"));
    }
}
