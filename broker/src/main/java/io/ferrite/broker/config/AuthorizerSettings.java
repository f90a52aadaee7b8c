package io.ferrite.broker.config;

import io.ferrite.broker.acl.Authorizer;
import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey.Validator;

import java.util.LinkedHashSet;
import java.util.Set;

import static io.ferrite.log.config.ConfigKey.Type.BOOLEAN;
import static io.ferrite.log.config.ConfigKey.Type.STRING;
import static io.ferrite.log.config.ConfigKey.Validator.NONE;

/**
 * The authorizer's settings, Kafka 4.4's names and defaults: {@code authorizer.class.name} (empty: no authorizer;
 * Kafka's {@code StandardAuthorizer}: Ferrite's, with its rules; any other class refused at start, as Ferrite loads
 * no classes), {@code super.users} ({@code User:a;User:b}) and {@code allow.everyone.if.no.acl.found}.
 */
public final class AuthorizerSettings
{
    public static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";
    public static final String SUPER_USERS = "super.users";
    public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";

    private AuthorizerSettings()
    {
    }

    static void define(final ConfigCatalogue c)
    {
        c.define(AUTHORIZER_CLASS_NAME, STRING, "", Validator.described("empty or " + Authorizer.STANDARD, (name, value) ->
        {
            if (!"".equals(value) && !Authorizer.STANDARD.equals(value))
            {
                throw new ConfigException(name, value, "Ferrite's authorizer has the rules of Kafka's StandardAuthorizer and loads "
                    + "no other class: set " + Authorizer.STANDARD + " to turn authorization on, or leave it empty for none");
            }
        }), true, "the authorizer: " + Authorizer.STANDARD + " turns on ACL authorization with its rules; empty: none, every request allowed")
            .define(SUPER_USERS, STRING, "", NONE, true, "principals allowed everything, separated by semicolons (User:admin;User:bob)")
            .define(ALLOW_EVERYONE_IF_NO_ACL_FOUND, BOOLEAN, "false", NONE, true,
                "whether a resource no ACL names is open to every principal (false: only super users may use it)");
    }

    /**
     * Refuses an authorizer on a cluster node ({@code controller.quorum.voters} or {@code process.roles} set): a cluster's
     * Metadata, forwarded topic commands and inter-node requests are not checked there, and each node would keep ACLs
     * of its own, so the setting would promise a protection that does not hold. Refused until it is built.
     */
    static void check(final BrokerConfig config)
    {
        final String className = config.getString(AUTHORIZER_CLASS_NAME);
        if (className == null || className.isEmpty())
        {
            return;
        }
        for (final String cluster : new String[] {"process.roles", "controller.quorum.voters"})
        {
            if (config.values().containsKey(cluster))
            {
                throw new ConfigException(AUTHORIZER_CLASS_NAME + " is not supported in cluster mode (" + cluster + " is set): "
                    + "a cluster node checks no ACLs and does not replicate them yet; leave " + AUTHORIZER_CLASS_NAME
                    + " empty there, or run a single node");
            }
        }
    }

    /** The authorizer {@code config} asks for: {@link Authorizer#DISABLED}, or one with StandardAuthorizer's rules. */
    public static Authorizer authorizer(final BrokerConfig config)
    {
        final String className = config.getString(AUTHORIZER_CLASS_NAME);
        if (className == null || className.isEmpty())
        {
            return Authorizer.DISABLED;
        }
        final Set<String> superUsers = new LinkedHashSet<>();
        final String users = config.getString(SUPER_USERS);
        for (final String user : users == null ? new String[0] : users.split(";"))
        {
            if (!user.isBlank())
            {
                superUsers.add(user.trim());
            }
        }
        return Authorizer.standard(superUsers, config.getBoolean(ALLOW_EVERYONE_IF_NO_ACL_FOUND));
    }
}
