package io.ferrite.wire.testing;

import java.util.Random;
import java.util.function.Consumer;

/**
 * A small property-test runner: runs a check against many seeded random inputs and, on failure,
 * names the seed that replays it.
 *
 * <ul>
 *   <li>Each try gets its own {@link Random}, seeded from the property's base seed and the try's index.</li>
 *   <li>The base seed is fixed per property (derived from its name) so CI is deterministic;
 *       {@code -Dferrite.seed=N} sets another base, {@code -Dferrite.random=true} a fresh one per run.</li>
 *   <li>{@code -Dferrite.replay=S} runs only the try whose seed is {@code S}.</li>
 *   <li>{@code -Dferrite.tries=N} overrides the number of tries (longer local runs);
 *       {@code -Dferrite.tries.factor=F} multiplies each property's own (the {@code long} Maven profile sets 10).</li>
 * </ul>
 *
 * (The project set out to use jqwik; from 1.10 jqwik asks that coding agents not use it, and this
 * code is written by one, so the few features we need live here.)
 */
public final class Property
{
    private Property()
    {
    }

    public static void check(final String name, final int tries, final Consumer<Random> body)
    {
        final String replay = System.getProperty("ferrite.replay");
        if (replay != null)
        {
            run(name, Long.parseLong(replay), -1, body);
            return;
        }
        final long base;
        if (Boolean.getBoolean("ferrite.random"))
        {
            base = System.nanoTime();
            System.out.println("property " + name + ": base seed " + base);
        }
        else
        {
            base = Long.getLong("ferrite.seed", 0x9E37_79B9_7F4A_7C15L ^ name.hashCode());
        }
        final int n = Integer.getInteger("ferrite.tries", tries * Integer.getInteger("ferrite.tries.factor", 1));
        final Random seeds = new Random(base);
        for (int i = 0; i < n; i++)
        {
            run(name, seeds.nextLong(), i, body);
        }
    }

    private static void run(final String name, final long seed, final int index, final Consumer<Random> body)
    {
        try
        {
            body.accept(new Random(seed));
        }
        catch (final AssertionError | RuntimeException ex)
        {
            throw new AssertionError("property '" + name + "' failed at try " + index + "; replay with -Dferrite.replay=" +
                seed + ": " + ex, ex);
        }
    }

    // ---- generators with a bias to the edges ----

    public static int anyInt(final Random r)
    {
        switch (r.nextInt(8))
        {
            case 0: return 0;
            case 1: return -1;
            case 2: return Integer.MAX_VALUE;
            case 3: return Integer.MIN_VALUE;
            case 4: return r.nextInt(256) - 128;
            case 5: return 1 << r.nextInt(31);
            default: return r.nextInt();
        }
    }

    public static long anyLong(final Random r)
    {
        switch (r.nextInt(8))
        {
            case 0: return 0;
            case 1: return -1;
            case 2: return Long.MAX_VALUE;
            case 3: return Long.MIN_VALUE;
            case 4: return r.nextInt(256) - 128;
            case 5: return 1L << r.nextInt(63);
            default: return r.nextLong();
        }
    }

    /** Null (when allowed) one time in eight; lengths mostly small, sometimes up to {@code max}. */
    public static byte[] bytes(final Random r, final int max, final boolean nullable)
    {
        if (nullable && r.nextInt(8) == 0)
        {
            return null;
        }
        final int length = r.nextInt(4) == 0 ? r.nextInt(max + 1) : r.nextInt(Math.min(max, 16) + 1);
        final byte[] b = new byte[length];
        if (r.nextBoolean())
        {
            r.nextBytes(b);
        }
        else
        {
            // compressible
            for (int i = 0; i < length; i++)
            {
                b[i] = (byte)('a' + (i % 7));
            }
        }
        return b;
    }

    private static final String CHARS = "aZ09 _-.é中\uD83D\uDE00";

    /** Strings with one-, two-, three- and four-byte UTF-8 characters (and now and then a lone surrogate). */
    public static String string(final Random r, final int maxChars)
    {
        return string(r, maxChars, true);
    }

    /**
     * @param loneSurrogates whether to include lone surrogates, which UTF-8 cannot encode (Java writes '?')
     */
    public static String string(final Random r, final int maxChars, final boolean loneSurrogates)
    {
        final StringBuilder sb = new StringBuilder();
        final int n = r.nextInt(maxChars + 1);
        for (int i = 0; i < n; i++)
        {
            final int c = r.nextInt(CHARS.length());
            if (loneSurrogates && r.nextInt(50) == 0)
            {
                sb.append('\uD800'); // lone surrogate
            }
            else if (Character.isSurrogate(CHARS.charAt(c)))
            {
                sb.append("\uD83D\uDE00");
            }
            else
            {
                sb.append(CHARS.charAt(c));
            }
        }
        return sb.toString();
    }
}
