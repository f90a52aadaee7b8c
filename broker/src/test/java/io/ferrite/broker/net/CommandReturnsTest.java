package io.ferrite.broker.net;

import org.junit.jupiter.api.Test;

import java.nio.channels.Selector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The wake-up from the log threads: a network thread about to block in select is woken once per
 * pass however many commands come back meanwhile (issue 17: once per duty cycle, not per command),
 * and never while it is not selecting.
 */
class CommandReturnsTest
{
    @Test
    void aSelectingThreadIsWokenOncePerPassNotOncePerCommand() throws Exception
    {
        try (Selector selector = Selector.open())
        {
            final CommandReturns returns = new CommandReturns(0, selector);
            assertFalse(returns.arm(), "no log threads, nothing returned");
            // two log threads returning five commands each while the network thread selects
            final Thread[] logThreads = new Thread[2];
            for (int t = 0; t < logThreads.length; t++)
            {
                logThreads[t] = new Thread(() ->
                {
                    for (int i = 0; i < 5; i++)
                    {
                        returns.signal();
                    }
                });
                logThreads[t].start();
            }
            for (final Thread t : logThreads)
            {
                t.join();
            }
            assertEquals(1, returns.wakeups(), "one wake-up for the ten commands of the pass");
            selector.selectNow(); // the pass the wake-up ended
            returns.disarm();

            returns.signal();
            assertEquals(1, returns.wakeups(), "a thread in its pass drains the queues anyway: no wake-up");

            assertFalse(returns.arm());
            returns.signal();
            returns.signal();
            assertEquals(2, returns.wakeups(), "the next blocking select is woken again, once");
            returns.disarm();
        }
    }
}
