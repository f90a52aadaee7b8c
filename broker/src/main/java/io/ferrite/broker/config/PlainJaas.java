package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The users of a SASL/PLAIN listener from its {@code listener.name.<listener>.plain.sasl.jaas.config}, read as Kafka's
 * {@code PlainLoginModule} and its server callback read them: one login module entry
 * ({@code org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" ...;}), each
 * {@code user_<name>="<password>"} option a user. The text is parsed here (JAAS' syntax: a class name, a control flag,
 * {@code key=value} options with quoted or bare values, a closing {@code ;}); an error names the setting and the
 * position, never the text (it holds passwords).
 */
public final class PlainJaas
{
    public static final String PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    private static final String USER_PREFIX = "user_";

    private final String setting;
    private final String text;
    private int pos;

    private PlainJaas(final String setting, final String text)
    {
        this.setting = setting;
        this.text = text;
    }

    /**
     * The users and passwords of {@code text} (the value of {@code setting}).
     *
     * @throws ConfigException naming the setting (not the value) for a text that is not one PlainLoginModule entry
     */
    public static Map<String, String> users(final String setting, final String text)
    {
        return new PlainJaas(setting, text).parse();
    }

    private Map<String, String> parse()
    {
        final String module = token("a login module class");
        if (!module.equals(PLAIN_LOGIN_MODULE))
        {
            throw fail("the login module must be " + PLAIN_LOGIN_MODULE);
        }
        final String flag = token("a control flag");
        if (!flag.equals("required") && !flag.equals("requisite") && !flag.equals("sufficient") && !flag.equals("optional"))
        {
            throw fail("expected a control flag (required, requisite, sufficient or optional) after the login module");
        }
        final Map<String, String> users = new LinkedHashMap<>();
        while (true)
        {
            skipSpace();
            if (pos >= text.length())
            {
                throw fail("the entry does not end with ';'");
            }
            if (text.charAt(pos) == ';')
            {
                pos++;
                break;
            }
            final String key = token("an option name");
            skipSpace();
            if (pos >= text.length() || text.charAt(pos) != '=')
            {
                // the token is not followed by '=': not an option name, perhaps a password whose user_<name>= is missing
                throw fail("expected an option name followed by '=' (is a user_<name>= missing?)");
            }
            pos++;
            final String value = value(key);
            if (key.startsWith(USER_PREFIX) && key.length() > USER_PREFIX.length())
            {
                users.put(key.substring(USER_PREFIX.length()), value);
            }
        }
        skipSpace();
        if (pos < text.length())
        {
            throw fail("only one login module entry is allowed");
        }
        return Collections.unmodifiableMap(users);
    }

    /** A bare token: up to a space, '=' or ';'. */
    private String token(final String what)
    {
        skipSpace();
        final int start = pos;
        while (pos < text.length() && !Character.isWhitespace(text.charAt(pos)) && text.charAt(pos) != '=' && text.charAt(pos) != ';')
        {
            pos++;
        }
        if (start == pos)
        {
            throw fail("expected " + what);
        }
        return text.substring(start, pos);
    }

    /** An option's value: quoted (with backslash escapes) or bare. */
    private String value(final String key)
    {
        skipSpace();
        if (pos < text.length() && text.charAt(pos) == '"')
        {
            pos++;
            final StringBuilder value = new StringBuilder();
            while (pos < text.length() && text.charAt(pos) != '"')
            {
                char c = text.charAt(pos++);
                if (c == '\\' && pos < text.length())
                {
                    c = text.charAt(pos++);
                }
                value.append(c);
            }
            if (pos >= text.length())
            {
                throw fail("unterminated quoted value of option " + named(key));
            }
            pos++;
            return value.toString();
        }
        return token("a value for option " + named(key));
    }

    private void skipSpace()
    {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos)))
        {
            pos++;
        }
    }

    /** An option name for a message: shown only when it looks like one (a misplaced password must not be). */
    private static String named(final String key)
    {
        return key.matches("[A-Za-z_][A-Za-z0-9_.]*") ? key : "at this position";
    }

    private ConfigException fail(final String problem)
    {
        return new ConfigException("Invalid JAAS configuration in " + setting + " at character " + pos + ": " + problem
            + " (the value is not shown: it holds passwords)");
    }
}
