package io.ferrite.testing;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferrite.testing.Await.await;
import static io.ferrite.testing.Await.awaitValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AwaitTest
{
    @Test
    void returnsOnceTheConditionHoldsAndAsksNoMore()
    {
        final AtomicInteger asked = new AtomicInteger();
        await(() -> asked.incrementAndGet() == 3, Duration.ofSeconds(30), "the third question");
        assertEquals(3, asked.get());
    }

    @Test
    void aConditionMetByAnotherThreadEndsTheWait() throws Exception
    {
        final CountDownLatch latch = new CountDownLatch(1);
        final Thread t = new Thread(latch::countDown);
        t.start();
        await(() -> latch.getCount() == 0, Duration.ofSeconds(30), "the other thread's count down");
        t.join();
    }

    @Test
    void theFailureSaysWhatWasAwaitedAndTheLastValueSeen()
    {
        final AtomicInteger asked = new AtomicInteger();
        final AssertionError e = assertThrows(AssertionError.class, () ->
            awaitValue(asked::incrementAndGet, n -> n < 0, Duration.ofMillis(20), "a negative count"));
        assertTrue(e.getMessage().startsWith("awaited a negative count for 20 ms; last observed: "), e.getMessage());
        assertEquals(Integer.toString(asked.get()), e.getMessage().substring(e.getMessage().lastIndexOf(' ') + 1));
    }

    @Test
    void theDescriptionIsReadWhenTheWaitFails()
    {
        final AtomicInteger seen = new AtomicInteger();
        final AssertionError e = assertThrows(AssertionError.class, () ->
            await(() -> seen.incrementAndGet() < 0, Duration.ofMillis(10), () -> "no more than " + seen.get() + " looks"));
        assertEquals("awaited no more than " + seen.get() + " looks for 10 ms", e.getMessage());
    }

    @Test
    void awaitValueReturnsTheAcceptedValue()
    {
        final AtomicInteger n = new AtomicInteger();
        assertEquals(5, awaitValue(n::incrementAndGet, v -> v == 5, Duration.ofSeconds(30), "five").intValue());
    }

    @Test
    void aProbeThatThrowsEndsTheWaitAtOnce()
    {
        final IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () ->
            await(() -> { throw boom; }, Duration.ofSeconds(30), "nothing")));
        final IOException io = new IOException("disk");
        assertSame(io, assertThrows(AssertionError.class, () ->
            await(() -> { throw io; }, Duration.ofSeconds(30), "nothing")).getCause());
    }
}
