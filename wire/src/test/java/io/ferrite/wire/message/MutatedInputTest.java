package io.ferrite.wire.message;

import io.ferrite.codegen.MessageSpec;
import io.ferrite.wire.ProtocolException;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Bad input: valid messages of every kind and version, truncated, overwritten with huge or negative
 * lengths, with bytes flipped, inserted or replaced by garbage. Each decoder either reads the bytes
 * (a mutation can still be a valid message) or fails with one {@link ProtocolException} naming a
 * field — never an IndexOutOfBounds, never an allocation sized by an unchecked length. The buffer
 * ends exactly where the frame does, so any read past the frame would throw from Agrona's checks.
 */
class MutatedInputTest
{
    private static final int MUTATIONS = Integer.getInteger("ferrite.mutations", 12);

    @TestFactory
    Stream<DynamicTest> mutatedMessagesFailTypedOrParse()
    {
        final List<DynamicTest> tests = new ArrayList<>();
        for (final MessageSpec spec : KafkaCrossValidationTest.SPECS)
        {
            tests.add(DynamicTest.dynamicTest(spec.name(), () -> mutate(spec)));
        }
        return tests.stream();
    }

    private static void mutate(final MessageSpec spec) throws Exception
    {
        int typedFailures = 0;
        int runs = 0;
        for (short v = spec.valid().lowest(); v <= spec.valid().highest(); v++)
        {
            for (int sample = 0; sample < 3; sample++)
            {
                final long seed = KafkaCrossValidationTest.seed(spec, v, 1000 + sample);
                final byte[] valid = KafkaCrossValidationTest.KafkaMessages.serialize(
                    KafkaCrossValidationTest.KafkaMessages.fromJson(spec, new RandomMessages(spec, seed).message(v), v), v);
                final Random random = new Random(seed);
                for (int m = 0; m < MUTATIONS; m++)
                {
                    final byte[] bad = mutation(valid, random);
                    runs++;
                    try
                    {
                        final UnsafeBuffer buffer = new UnsafeBuffer(bad);
                        // wrap, then every accessor through the bridge
                        MessageCodecs.decode(spec.name(), buffer, 0, bad.length, v, new int[1]);
                    }
                    catch (final ProtocolException expected)
                    {
                        assertTrue(expected.field() != null && !expected.field().isEmpty());
                        typedFailures++;
                    }
                    catch (final Throwable t)
                    {
                        fail(spec.name() + " v" + v + " seed " + seed + " mutation " + m + " bytes " +
                            Arrays.toString(bad) + ": " + t, t);
                    }
                }
            }
        }
        // mutations are mostly invalid; if none failed, the decoder is not checking anything
        if (runs > 20)
        {
            assertTrue(typedFailures > 0, spec.name() + ": no mutation was refused out of " + runs);
        }
    }

    static byte[] mutation(final byte[] valid, final Random random)
    {
        if (valid.length == 0)
        {
            final byte[] garbage = new byte[1 + random.nextInt(16)];
            random.nextBytes(garbage);
            return garbage;
        }
        final byte[] b = valid.clone();
        switch (random.nextInt(6))
        {
            case 0: // truncate
                return Arrays.copyOf(b, random.nextInt(b.length));
            case 1: // flip bytes
                for (int i = 0, n = 1 + random.nextInt(4); i < n; i++)
                {
                    b[random.nextInt(b.length)] ^= (byte)(1 << random.nextInt(8));
                }
                return b;
            case 2: // a huge or negative length/count where a prefix might be
            {
                final int at = random.nextInt(b.length);
                final int value = new int[] {Integer.MAX_VALUE, -2, -1000, 0x7FFF, 0xFFFF, 1 << 30}[random.nextInt(6)];
                for (int i = 0; i < 4 && at + i < b.length; i++)
                {
                    b[at + i] = (byte)(value >>> (24 - 8 * i));
                }
                return b;
            }
            case 3: // a varint that never ends
            {
                final int at = random.nextInt(b.length);
                for (int i = at; i < Math.min(b.length, at + 6); i++)
                {
                    b[i] = (byte)0xFF;
                }
                return b;
            }
            case 4: // insert garbage
            {
                final int at = random.nextInt(b.length);
                final byte[] garbage = new byte[1 + random.nextInt(8)];
                random.nextBytes(garbage);
                final byte[] out = new byte[b.length + garbage.length];
                System.arraycopy(b, 0, out, 0, at);
                System.arraycopy(garbage, 0, out, at, garbage.length);
                System.arraycopy(b, at, out, at + garbage.length, b.length - at);
                return out;
            }
            default: // all garbage
            {
                final byte[] garbage = new byte[b.length];
                random.nextBytes(garbage);
                return garbage;
            }
        }
    }
}
