package io.ferrite.log;

import org.agrona.concurrent.errors.ErrorLogReader;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The shared distinct-error log: what it counts, what it keeps once, and that reporting never throws. */
class AgentErrorsTest
{
    @Test
    void eachErrorIsCountedAndEachDistinctOneKeptOnceWithItsObservations()
    {
        final AgentErrors errors = new AgentErrors("test");
        for (int i = 0; i < 3; i++)
        {
            errors.onError(new IllegalStateException("the same defect")); // one site: the same stack
        }
        errors.onError("orders-0", new IllegalStateException("another"));
        assertEquals(4, errors.count());
        assertEquals(2, errors.distinct());
        final List<Integer> observations = new ArrayList<>();
        ErrorLogReader.read(errors.buffer(), (count, first, last, encoded) -> observations.add(count));
        assertEquals(List.of(3, 1), observations);
    }

    /**
     * One defect whose message carries a number (a size, an offset) is one kind: its copies neither
     * fill the log nor silence a new kind after them (a review measured the log full after 44 copies
     * when distinct meant class, message and stack).
     */
    @Test
    void copiesOfOneDefectWithDifferentMessagesLeaveRoomForTheNextDefect()
    {
        final AgentErrors errors = new AgentErrors("test");
        for (int i = 0; i < 1000; i++)
        {
            errors.onError(new IndexOutOfBoundsException("index=" + i + " capacity=64"));
        }
        errors.onError(new IllegalStateException("a new defect"));
        assertEquals(1001, errors.count());
        assertEquals(2, errors.distinct());
        final List<Integer> observations = new ArrayList<>();
        ErrorLogReader.read(errors.buffer(), (count, first, last, encoded) -> observations.add(count));
        assertEquals(List.of(1000, 1), observations);
    }

    /**
     * Reporting throws nothing, since a throw from an agent's error handler leaves its duty cycle (and
     * an Error ends Agrona's runner): an error that cannot be written out is counted only.
     */
    @Test
    void anErrorWhoseReportingThrowsIsCountedAndNothingIsThrown()
    {
        final AgentErrors errors = new AgentErrors("test");
        final Error unreadable = new Error("a defect")
        {
            @Override
            public String getMessage()
            {
                throw new OutOfMemoryError("simulated: met again while writing out the first");
            }
        };
        errors.onError(unreadable);
        errors.onFatal("the duty cycle", unreadable, "the agent stops");
        assertEquals(2, errors.count());
    }

    @Test
    void aFatalErrorIsCountedAndKept()
    {
        final AgentErrors errors = new AgentErrors("test");
        errors.onFatal("the duty cycle", new OutOfMemoryError("simulated"), "the agent stops");
        assertEquals(1, errors.count());
        assertEquals(1, errors.distinct());
    }
}
