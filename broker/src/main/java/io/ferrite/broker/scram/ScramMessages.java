package io.ferrite.broker.scram;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * The two client messages of a SCRAM exchange, parsed with the grammar Kafka 4.4's {@code ScramMessages} accepts (RFC 5802
 * section 7 as Kafka narrows it: the GS2 header must be {@code n} — no channel binding —, names and values ASCII).
 * A message that does not match is null here; the server answers it as Kafka does, "invalid credentials". The proofs
 * sign the client-first-message-bare as the client sent it (RFC 5802). Kafka 4.4 signs one it rebuilds, its extensions
 * in the order of an immutable {@code Map.copyOf} (javap of {@code SaslExtensions}: an order drawn at random per JVM), so
 * a client sending two or more extensions fails there at random; here it does not. With none or one (kafka-clients sends
 * {@code tokenauth} for delegation tokens only, librdkafka none) both sign the same bytes.
 *
 * <p>The grammar is Kafka's regular expressions', checked here by one scan of the comma-separated attributes (no
 * attribute holds a comma: a name's is escaped as {@code =2C}). A backtracking regex recursed once per character of a
 * name and overflowed the network thread's stack on a name of a few thousand characters; the scan's cost is linear in
 * the message, whose size is bounded only by the pre-authentication receive limit (512 KiB, Kafka's
 * {@code sasl.server.max.receive.size} default), as in Kafka.
 */
final class ScramMessages
{
    private static final String BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    /**
     * A client-first message: the user (its SASL name decoded: {@code =2C} is a comma, {@code =3D} an equals sign), the
     * authorization id as sent ("" when none; Kafka compares it undecoded with the decoded user), the client's nonce,
     * the extensions, and the bare message as received ({@code n=<name>,r=<nonce>[,<extensions>]}, RFC 5802's
     * client-first-message-bare: what the proofs sign).
     */
    record ClientFirst(String bare, String user, String authorizationId, String nonce, Map<String, String> extensions)
    {
    }

    /** A client-final message: the channel binding (decoded), the nonce and the proof (decoded). */
    record ClientFinal(byte[] channelBinding, String nonce, byte[] proof)
    {
        /** {@code c=<binding>,r=<nonce>}: what the proofs sign (Kafka leaves any extensions out of it). */
        String withoutProof()
        {
            return "c=" + Base64.getEncoder().encodeToString(channelBinding) + ",r=" + nonce;
        }
    }

    private ScramMessages()
    {
    }

    /**
     * The client-first message in {@code bytes}, or null when it is not one:
     * {@code n,[a=<saslname>],[m=<value>,]n=<saslname>,r=<printable>(,<alpha>=<value-safe>)*}.
     */
    static ClientFirst clientFirst(final byte[] bytes)
    {
        final String text = new String(bytes, StandardCharsets.UTF_8);
        final String[] parts = text.split(",", -1); // one pass (a one-character separator); empty parts kept
        if (parts.length < 4 || !parts[0].equals("n") || !(parts[1].isEmpty() || (parts[1].startsWith("a=") && saslName(parts[1], 2))))
        {
            return null;
        }
        int i = 2;
        if (parts[i].startsWith("m=") && value(parts[i], 2, false))
        {
            i++;
        }
        if (parts.length < i + 2 || !parts[i].startsWith("n=") || !saslName(parts[i], 2) || !parts[i + 1].startsWith("r=")
            || !printable(parts[i + 1], 2))
        {
            return null;
        }
        final Map<String, String> extensions = extensions(parts, i + 2, parts.length);
        if (extensions == null)
        {
            return null;
        }
        final String bare = text.substring(parts[0].length() + parts[1].length() + 2);
        return new ClientFirst(bare, user(parts[i].substring(2)), parts[1].isEmpty() ? "" : parts[1].substring(2), parts[i + 1].substring(2),
            extensions);
    }

    /** The client-final message in {@code bytes}, or null when it is not one: {@code c=<base64>,r=<printable>(,<extension>)*,p=<base64>}. */
    static ClientFinal clientFinal(final byte[] bytes)
    {
        final String[] parts = new String(bytes, StandardCharsets.UTF_8).split(",", -1);
        final int last = parts.length - 1;
        if (parts.length < 3 || !parts[0].startsWith("c=") || !base64(parts[0], 2) || !parts[1].startsWith("r=") || !printable(parts[1], 2)
            || !parts[last].startsWith("p=") || !base64(parts[last], 2) || extensions(parts, 2, last) == null)
        {
            return null;
        }
        return new ClientFinal(Base64.getDecoder().decode(parts[0].substring(2)), parts[1].substring(2), Base64.getDecoder().decode(parts[last].substring(2)));
    }

    /** {@code parts[from, to)} as extensions ({@code <alpha>+=<value-safe>}, a later key winning as in Kafka's {@code Utils.parseMap}), or null. */
    private static Map<String, String> extensions(final String[] parts, final int from, final int to)
    {
        final Map<String, String> extensions = new HashMap<>();
        for (int i = from; i < to; i++)
        {
            final String part = parts[i];
            final int eq = part.indexOf('=');
            if (eq < 1 || !value(part, eq + 1, true))
            {
                return null;
            }
            for (int k = 0; k < eq; k++)
            {
                final char c = part.charAt(k);
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
                {
                    return null;
                }
            }
            extensions.put(part.substring(0, eq), part.substring(eq + 1));
        }
        return extensions;
    }

    /** Whether {@code s} from {@code from} is a saslname: ASCII 0x01-0x7F but ',' and '=', or the escapes {@code =2C} and {@code =3D}; one or more. */
    private static boolean saslName(final String s, final int from)
    {
        if (s.length() == from)
        {
            return false;
        }
        for (int i = from; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if (c == '=')
            {
                if (!(s.startsWith("2C", i + 1) || s.startsWith("3D", i + 1)))
                {
                    return false;
                }
                i += 2;
            }
            else if (c < 0x01 || c > 0x7F)
            {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} from {@code from} is a value: one or more of ASCII 0x01-0x7F (no ',': split on it), and no '=' when {@code safe}. */
    private static boolean value(final String s, final int from, final boolean safe)
    {
        return run(s, from, (char)0x01, (char)0x7F, safe ? '=' : (char)0);
    }

    /** Whether {@code s} from {@code from} is printable: one or more of ASCII 0x21-0x7E (no ','). */
    private static boolean printable(final String s, final int from)
    {
        return run(s, from, (char)0x21, (char)0x7E, (char)0);
    }

    /** Whether {@code s} from {@code from} is one or more characters in {@code [low, high]}, none of them {@code excluded}. */
    private static boolean run(final String s, final int from, final char low, final char high, final char excluded)
    {
        if (s.length() == from)
        {
            return false;
        }
        for (int i = from; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if (c < low || c > high || c == excluded)
            {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} from {@code from} is base64 as Kafka's grammar has it: quanta of four, the last one ending in {@code =} or {@code ==}; or empty. */
    private static boolean base64(final String s, final int from)
    {
        final int length = s.length() - from;
        if (length % 4 != 0)
        {
            return false;
        }
        final int padding = length == 0 ? 0 : s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
        for (int i = from; i < s.length() - padding; i++)
        {
            if (BASE64_ALPHABET.indexOf(s.charAt(i)) < 0)
            {
                return false;
            }
        }
        return true;
    }

    /** {@code r=<nonce>,s=<salt>,i=<iterations>}. */
    static String serverFirst(final String nonce, final byte[] salt, final int iterations)
    {
        return "r=" + nonce + ",s=" + Base64.getEncoder().encodeToString(salt) + ",i=" + iterations;
    }

    /** {@code v=<server signature>}. */
    static String serverFinal(final byte[] signature)
    {
        return "v=" + Base64.getEncoder().encodeToString(signature);
    }

    private static String user(final String saslName)
    {
        return saslName.replace("=2C", ",").replace("=3D", "=");
    }
}
