package io.ferrite.broker.scram;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two client messages of a SCRAM exchange, parsed with the grammar Kafka 4.4's {@code ScramMessages} accepts (RFC 5802
 * section 7 as Kafka narrows it: the GS2 header must be {@code n} — no channel binding —, names and values ASCII).
 * A message that does not match is null here; the server answers it as Kafka does, "invalid credentials". The proofs
 * sign the client-first-message-bare as the client sent it (RFC 5802). Kafka 4.4 signs one it rebuilds, its extensions
 * in the order of an immutable {@code Map.copyOf} (javap of {@code SaslExtensions}: an order drawn at random per JVM), so
 * a client sending two or more extensions fails there at random; here it does not. With none or one (kafka-clients sends
 * {@code tokenauth} for delegation tokens only, librdkafka none) both sign the same bytes.
 */
final class ScramMessages
{
    private static final String SASLNAME = "(?:[\\x01-\\x7F&&[^=,]]|=2C|=3D)+";
    private static final String VALUE = "[\\x01-\\x7F&&[^,]]+";
    private static final String VALUE_SAFE = "[\\x01-\\x7F&&[^=,]]+";
    private static final String PRINTABLE = "[\\x21-\\x7E&&[^,]]+";
    private static final String BASE64_CHAR = "[a-zA-Z0-9/+]";
    private static final String BASE64 = "(?:" + BASE64_CHAR + "{4})*(?:" + BASE64_CHAR + "{3}=|" + BASE64_CHAR + "{2}==)?";
    private static final String EXTENSIONS = "(,[A-Za-z]+=" + VALUE_SAFE + ")*";
    private static final Pattern CLIENT_FIRST = Pattern.compile("n,(a=(?<authzid>" + SASLNAME + "))?,(?<bare>(m=" + VALUE
        + ",)?n=(?<saslname>" + SASLNAME + "),r=(?<nonce>" + PRINTABLE + ")(?<extensions>" + EXTENSIONS + "))");
    private static final Pattern CLIENT_FINAL = Pattern.compile("c=(?<channel>" + BASE64 + "),r=(?<nonce>" + PRINTABLE + ")"
        + EXTENSIONS + ",p=(?<proof>" + BASE64 + ")");

    /**
     * A client-first message: the user (its SASL name decoded: {@code =2C} is a comma, {@code =3D} an equals sign), the
     * authorization id ("" when none), the client's nonce, the extensions, and the bare message as received
     * ({@code n=<name>,r=<nonce>[,<extensions>]}, RFC 5802's client-first-message-bare: what the proofs sign).
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

    /** The client-first message in {@code bytes}, or null when it is not one. */
    static ClientFirst clientFirst(final byte[] bytes)
    {
        final Matcher m = CLIENT_FIRST.matcher(new String(bytes, StandardCharsets.UTF_8));
        if (!m.matches())
        {
            return null;
        }
        final Map<String, String> extensions = new HashMap<>(); // as Kafka's Utils.parseMap: a later key wins
        final String text = m.group("extensions");
        if (!text.isEmpty())
        {
            for (final String pair : text.substring(1).split(","))
            {
                final int eq = pair.indexOf('=');
                extensions.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        final String authzid = m.group("authzid");
        return new ClientFirst(m.group("bare"), user(m.group("saslname")), authzid == null ? "" : user(authzid), m.group("nonce"), extensions);
    }

    /** The client-final message in {@code bytes}, or null when it is not one. */
    static ClientFinal clientFinal(final byte[] bytes)
    {
        final Matcher m = CLIENT_FINAL.matcher(new String(bytes, StandardCharsets.UTF_8));
        if (!m.matches())
        {
            return null;
        }
        return new ClientFinal(Base64.getDecoder().decode(m.group("channel")), m.group("nonce"), Base64.getDecoder().decode(m.group("proof")));
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
