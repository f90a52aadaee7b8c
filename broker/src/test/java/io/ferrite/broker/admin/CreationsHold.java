package io.ferrite.broker.admin;

/**
 * Tests' accessor of {@link PendingCreations}' test hook (package-private there, so no embedder reaches it): while
 * held, the agent makes no chunk between its commands; a command that needs a topic, and the backlog's bound, still
 * make files.
 */
public final class CreationsHold
{
    private CreationsHold()
    {
    }

    public static void hold(final PendingCreations creations, final boolean hold)
    {
        creations.hold(hold);
    }
}
