package io.ferrite.broker.e2e;

import java.util.Random;

/**
 * The rounds and seed of a crash test, from {@code -Dferrite.<name>.rounds} and
 * {@code -Dferrite.<name>.seed} (a fresh seed unless given), printed so that a failure can be replayed.
 */
record CrashRounds(int rounds, long seed, Random random)
{
    static CrashRounds of(final Class<?> test, final String name, final int defaultRounds)
    {
        final int rounds = Integer.getInteger("ferrite." + name + ".rounds", defaultRounds);
        final long seed = Long.getLong("ferrite." + name + ".seed", System.nanoTime());
        System.out.println(test.getSimpleName() + ": " + rounds + " rounds, seed " + seed + " (-Dferrite." + name + ".seed to replay)");
        return new CrashRounds(rounds, seed, new Random(seed));
    }
}
