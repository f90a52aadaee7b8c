package io.ferrite.broker.e2e;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * What an answer says about authorization, field by field, as one line that a Ferrite answer and a Kafka answer can be
 * compared on: every error code ({@code errorCode}, {@code *ErrorCode}) by name, every error message, every authorized
 * operations field that was filled (as operation names; an empty message is read as none, which no client tells apart), and the fields that say which resource an entry is about
 * (topic, group, transactional id, partition ...), walked through the nested entries of kafka-clients' message classes.
 * Entries of a list are sorted (Kafka lists some refusals before the answered entries, which no client reads), entries
 * that say none of this are left out. Identities go through {@code ids} (a test's run prefix made constant; null: leave
 * the entry out, e.g. another run's topic in a listing); messages lose what names one connection (Kafka's
 * {@code processor=}, {@code connectionId=}, a session's and a buffer's identity).
 */
final class AclAnswers
{
    /** The fields that name what an entry is about. */
    private static final Set<String> IDENTITIES = Set.of("name", "topic", "groupId", "transactionalId", "resourceName", "key",
        "partitionIndex", "partition", "index", "user");

    /**
     * Fields that say nothing of authorization and differ for other reasons: the configs CreateTopics v5+ returns with a
     * created topic (Kafka 4.4 has topic configs Ferrite does not know).
     */
    private static final Set<String> SKIPPED = Set.of("CreatableTopicResult.configs");

    private AclAnswers()
    {
    }

    static String summary(final Message message, final UnaryOperator<String> ids)
    {
        final String s = walk(message, ids);
        return s == null || s.isEmpty() ? "{}" : s;
    }

    /** One message's line; "" when it says nothing of interest, null when {@code ids} leaves it out. */
    private static String walk(final Object message, final UnaryOperator<String> ids)
    {
        final List<String> parts = new ArrayList<>();
        for (final Field f : message.getClass().getDeclaredFields())
        {
            if (Modifier.isStatic(f.getModifiers()) || f.getName().startsWith("_") || SKIPPED.contains(message.getClass().getSimpleName()
                + "." + f.getName()))
            {
                continue;
            }
            f.setAccessible(true);
            final String n = f.getName();
            final Object v;
            try
            {
                v = f.get(message);
            }
            catch (final IllegalAccessException ex)
            {
                throw new IllegalStateException(ex);
            }
            if ((n.equals("errorCode") || n.endsWith("ErrorCode")) && v instanceof Short code)
            {
                parts.add(n + "=" + Errors.forCode(code).name());
            }
            else if ((n.equals("errorMessage") || n.endsWith("ErrorMessage")) && v != null && !v.toString().isEmpty())
            {
                final String constant = ids.apply(v.toString());
                parts.add(n + "='" + message(constant != null ? constant : v.toString()) + "'");
            }
            else if (n.endsWith("uthorizedOperations") && v instanceof Integer bits && bits != Integer.MIN_VALUE)
            {
                parts.add(n + "=" + operations(bits));
            }
            else if (IDENTITIES.contains(n) && v != null)
            {
                final String id = v instanceof String s ? ids.apply(s) : v.toString();
                if (id == null)
                {
                    return null;
                }
                parts.add(n + "=" + id);
            }
            else if (v instanceof Collection<?> c && !c.isEmpty() && c.iterator().next() instanceof Message)
            {
                final List<String> all = new ArrayList<>();
                for (final Object e : c)
                {
                    final String s = walk(e, ids);
                    if (s != null && !s.isEmpty())
                    {
                        all.add(s);
                    }
                }
                all.sort(null);
                if (!all.isEmpty())
                {
                    parts.add(n + "[" + String.join(" ", all) + "]");
                }
            }
        }
        return parts.isEmpty() ? "" : "{" + String.join(" ", parts) + "}";
    }

    /** An error message without what names its connection (Kafka's request description). */
    static String message(final String text)
    {
        return text.replaceAll("processor=\\d+", "processor=N").replaceAll("connectionId=[^,]*", "connectionId=C")
            .replaceAll("Session@[0-9a-f]+", "Session@H").replaceAll("HeapByteBuffer\\[[^\\]]*\\]", "HeapByteBuffer[B]");
    }

    /** Kafka's 32-bit field of authorized operations as their names, in code order. */
    static String operations(final int bits)
    {
        final List<String> names = new ArrayList<>();
        for (final AclOperation op : AclOperation.values())
        {
            if (op.code() >= 0 && op.code() < 32 && (bits & (1 << op.code())) != 0)
            {
                names.add(op.name());
            }
        }
        return names.toString().replace(" ", "");
    }
}
