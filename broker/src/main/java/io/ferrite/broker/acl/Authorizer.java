package io.ferrite.broker.acl;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Set;

/**
 * The broker's authorizer, Kafka 4.4's {@code StandardAuthorizer} in behaviour ({@link AclIndex} has the rules): on when
 * {@code authorizer.class.name} names it, else {@link #DISABLED} — every request allowed and the ACL APIs answering
 * SECURITY_DISABLED, as Kafka without an authorizer. {@code super.users} are allowed everything; a resource with no ACL
 * is allowed to everyone only with {@code allow.everyone.if.no.acl.found}.
 *
 * <p>Threads: the ACLs are an immutable {@link AclIndex} behind a volatile reference, read by every network thread with
 * no lock; one writer at a time — the admin agent, running a CreateAcls or DeleteAcls — replaces it, after the ACLs'
 * file ({@link AclsFile}) holds the new set, so a client is never answered with an ACL a restart would lose. Made before
 * the listeners are bound, {@link #load loaded} once the log directory is the broker's, before a connection is served.
 */
public final class Authorizer
{
    /** Kafka 4.4's authorizer class, the one value of {@code authorizer.class.name} that turns authorization on. */
    public static final String STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    /** No authorizer: everything allowed. */
    public static final Authorizer DISABLED = new Authorizer(false, Set.of(), true);

    private final boolean enabled;
    private final Set<String> superUsers;
    private final boolean allowEveryoneIfNoAcl;
    private volatile AclIndex index = AclIndex.EMPTY;
    /** Null until loaded (then nothing is written: a broker that has not read its file must not replace it). */
    private volatile Path file;

    private Authorizer(final boolean enabled, final Set<String> superUsers, final boolean allowEveryoneIfNoAcl)
    {
        this.enabled = enabled;
        this.superUsers = Set.copyOf(superUsers);
        this.allowEveryoneIfNoAcl = allowEveryoneIfNoAcl;
    }

    /** An authorizer with StandardAuthorizer's rules; its ACLs are read by {@link #load}. */
    public static Authorizer standard(final Set<String> superUsers, final boolean allowEveryoneIfNoAcl)
    {
        return new Authorizer(true, superUsers, allowEveryoneIfNoAcl);
    }

    public boolean enabled()
    {
        return enabled;
    }

    /** The ACLs' file of a broker whose first log directory is {@code dir}. */
    public static Path fileIn(final Path dir)
    {
        return dir.resolve(AclsFile.FILE);
    }

    /** Reads {@code dir}'s ACLs' file, if there is one (nothing for a disabled authorizer). */
    public void load(final Path dir) throws IOException
    {
        if (!enabled)
        {
            return;
        }
        final Path f = fileIn(dir);
        index = new AclIndex(AclsFile.read(f), index.version() + 1);
        file = f;
    }

    /** The ACLs now (immutable; its version changes with each change). */
    public AclIndex acls()
    {
        return index;
    }

    /**
     * Whether {@code principal} connected from {@code host} may do {@code operation} on the resource. Allocates
     * nothing; on the network threads, no lock.
     */
    public boolean authorize(final String principal, final String host, final byte operation, final byte resourceType, final String name)
    {
        if (!enabled || superUsers.contains(principal))
        {
            return true;
        }
        final byte decision = index.authorize(principal, host, operation, resourceType, name);
        return decision == AclIndex.ALLOWED || decision == AclIndex.NO_ACLS && allowEveryoneIfNoAcl;
    }

    /**
     * Whether {@code principal} may do {@code operation} on some resource of {@code resourceType}: Kafka's
     * {@code authorizeByResourceType} (an idempotent producer's InitProducerId asks it of WRITE on topics) — allowed on a
     * name no ACL names (a super user; {@code allow.everyone.if.no.acl.found} with no ACL there), else
     * {@link AclIndex#allowsSome}. Allocates: for admin paths.
     */
    public boolean authorizeSome(final String principal, final String host, final byte operation, final byte resourceType)
    {
        return authorize(principal, host, operation, resourceType, "hardcode") || index.allowsSome(principal, host, operation, resourceType);
    }

    /**
     * The single writer's (the admin agent's): the ACLs with {@code added} and without {@code removed}, written to the
     * file, then published, then the directory fsynced. The answer to the client waits for all of it.
     *
     * @throws NotDurableException when the directory fsync failed: the change is published and in the file, maybe not durably
     * @throws IOException when the file could not be replaced: nothing changed
     */
    public void change(final Collection<AclBinding> added, final Collection<AclBinding> removed) throws IOException
    {
        final Path f = file;
        if (f == null)
        {
            throw new IOException("the ACLs were not loaded");
        }
        final AclIndex next = index.with(added, removed);
        AclsFile.writeContent(f, next.all()); // throws: the old file stands, nothing changed
        index = next;
        try
        {
            DurableFile.fsyncDirectory(f.getParent());
        }
        catch (final IOException ex)
        {
            throw new NotDurableException(ex);
        }
    }

    /** The file was replaced and its ACLs are in effect, but its directory could not be fsynced: a crash may undo the change. */
    public static final class NotDurableException extends IOException
    {
        private static final long serialVersionUID = 1L;

        NotDurableException(final IOException cause)
        {
            super("the ACLs' file was replaced but its directory could not be fsynced: " + cause, cause);
        }
    }
}
