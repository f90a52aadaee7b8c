package io.ferrite.broker.acl;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static io.ferrite.broker.acl.AclCodes.ALL;
import static io.ferrite.broker.acl.AclCodes.ALLOW;
import static io.ferrite.broker.acl.AclCodes.ALTER;
import static io.ferrite.broker.acl.AclCodes.ALTER_CONFIGS;
import static io.ferrite.broker.acl.AclCodes.CREATE;
import static io.ferrite.broker.acl.AclCodes.DELETE;
import static io.ferrite.broker.acl.AclCodes.DENY;
import static io.ferrite.broker.acl.AclCodes.DESCRIBE;
import static io.ferrite.broker.acl.AclCodes.DESCRIBE_CONFIGS;
import static io.ferrite.broker.acl.AclCodes.GROUP;
import static io.ferrite.broker.acl.AclCodes.LITERAL;
import static io.ferrite.broker.acl.AclCodes.PREFIXED;
import static io.ferrite.broker.acl.AclCodes.READ;
import static io.ferrite.broker.acl.AclCodes.TOPIC;
import static io.ferrite.broker.acl.AclCodes.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** StandardAuthorizer's rules as {@link Authorizer} applies them, and the ACLs' file. */
class AuthorizerTest
{
    private static final String ALICE = "User:alice";
    private static final String HOST = "127.0.0.1";

    @TempDir
    Path dir;

    private static AclBinding acl(final byte type, final String name, final byte pattern, final String principal, final String host,
        final byte operation, final byte permission)
    {
        return new AclBinding(type, name, pattern, principal, host, operation, permission);
    }

    private static AclBinding allow(final byte type, final String name, final byte pattern, final byte operation)
    {
        return acl(type, name, pattern, ALICE, "*", operation, ALLOW);
    }

    /** An authorizer holding {@code acls} only: the ACLs' file in {@link #dir} started afresh (a reload reads the last one's). */
    private Authorizer with(final boolean allowEveryone, final AclBinding... acls) throws IOException
    {
        Files.deleteIfExists(Authorizer.fileIn(dir));
        final Authorizer authorizer = Authorizer.standard(Set.of("User:admin"), allowEveryone);
        authorizer.load(dir);
        authorizer.change(List.of(acls), List.of());
        return authorizer;
    }

    @Test
    void withoutAclsOnlySuperUsersUnlessEveryoneIsAllowed() throws IOException
    {
        final Authorizer closed = with(false);
        assertFalse(closed.authorize(ALICE, HOST, READ, TOPIC, "t"));
        assertTrue(closed.authorize("User:admin", HOST, READ, TOPIC, "t"));
        assertTrue(with(true).authorize(ALICE, HOST, READ, TOPIC, "t"));
        assertTrue(Authorizer.DISABLED.authorize(ALICE, HOST, DELETE, TOPIC, "t"), "no authorizer: everything allowed");
    }

    @Test
    void anAclForSomeoneElseClosesTheResourceEvenWhenEveryoneIsAllowed() throws IOException
    {
        final Authorizer authorizer = with(true, acl(TOPIC, "t", LITERAL, "User:bob", "*", READ, ALLOW));
        assertFalse(authorizer.authorize(ALICE, HOST, READ, TOPIC, "t"));
        assertTrue(authorizer.authorize(ALICE, HOST, READ, TOPIC, "other"));
        assertTrue(authorizer.authorize("User:bob", HOST, READ, TOPIC, "t"));
    }

    @Test
    void literalWildcardAndPrefixedPatternsMatchAsKafkas() throws IOException
    {
        final Authorizer authorizer = with(false, allow(TOPIC, "orders", LITERAL, READ), allow(TOPIC, "pay", PREFIXED, WRITE),
            allow(GROUP, "*", LITERAL, READ));
        assertTrue(authorizer.authorize(ALICE, HOST, READ, TOPIC, "orders"));
        assertFalse(authorizer.authorize(ALICE, HOST, READ, TOPIC, "orders2"), "LITERAL is the whole name");
        assertTrue(authorizer.authorize(ALICE, HOST, WRITE, TOPIC, "payments"));
        assertTrue(authorizer.authorize(ALICE, HOST, WRITE, TOPIC, "pay"));
        assertFalse(authorizer.authorize(ALICE, HOST, WRITE, TOPIC, "pa"));
        assertTrue(authorizer.authorize(ALICE, HOST, READ, GROUP, "any-group"), "the * resource");
        assertFalse(authorizer.authorize(ALICE, HOST, READ, TOPIC, "*other"), "* only as a LITERAL pattern's whole name");
        assertFalse(authorizer.authorize("User:bob", HOST, READ, TOPIC, "orders"));
    }

    @Test
    void principalWildcardAndHostsMatch() throws IOException
    {
        final Authorizer authorizer = with(false, acl(TOPIC, "t", LITERAL, "User:*", "*", READ, ALLOW),
            acl(TOPIC, "h", LITERAL, ALICE, "10.0.0.1", READ, ALLOW));
        assertTrue(authorizer.authorize("User:bob", HOST, READ, TOPIC, "t"));
        assertTrue(authorizer.authorize(ALICE, "10.0.0.1", READ, TOPIC, "h"));
        assertFalse(authorizer.authorize(ALICE, HOST, READ, TOPIC, "h"));
    }

    @Test
    void denyWinsAndImpliesNothing() throws IOException
    {
        final Authorizer authorizer = with(false, allow(TOPIC, "t", LITERAL, ALL), acl(TOPIC, "t", PREFIXED, ALICE, "*", WRITE, DENY),
            allow(TOPIC, "r", LITERAL, READ), acl(TOPIC, "r", LITERAL, ALICE, "*", READ, DENY),
            allow(TOPIC, "x", LITERAL, ALL), acl(TOPIC, "*", LITERAL, ALICE, "10.9.9.9", ALL, DENY));
        assertFalse(authorizer.authorize(ALICE, HOST, WRITE, TOPIC, "t"), "a DENY on a prefix wins over an ALLOW ALL on the name");
        assertTrue(authorizer.authorize(ALICE, HOST, READ, TOPIC, "t"));
        assertTrue(authorizer.authorize(ALICE, HOST, DESCRIBE, TOPIC, "t"), "a DENY of WRITE does not deny DESCRIBE");
        assertFalse(authorizer.authorize(ALICE, HOST, READ, TOPIC, "r"));
        assertFalse(authorizer.authorize(ALICE, "10.9.9.9", READ, TOPIC, "x"), "DENY ALL from that host on *");
        assertTrue(authorizer.authorize(ALICE, HOST, READ, TOPIC, "x"));
    }

    @Test
    void allowsImplyAsKafkas() throws IOException
    {
        for (final byte granted : new byte[] {READ, WRITE, DELETE, ALTER})
        {
            assertTrue(with(false, allow(TOPIC, "t" + granted, LITERAL, granted)).authorize(ALICE, HOST, DESCRIBE, TOPIC, "t" + granted),
                "DESCRIBE implied by " + granted);
        }
        final Authorizer authorizer = with(false, allow(TOPIC, "c", LITERAL, ALTER_CONFIGS), allow(TOPIC, "d", LITERAL, DESCRIBE));
        assertTrue(authorizer.authorize(ALICE, HOST, DESCRIBE_CONFIGS, TOPIC, "c"));
        assertFalse(authorizer.authorize(ALICE, HOST, DESCRIBE, TOPIC, "c"), "ALTER_CONFIGS implies DESCRIBE_CONFIGS only");
        assertFalse(authorizer.authorize(ALICE, HOST, READ, TOPIC, "d"), "DESCRIBE implies nothing");
        assertFalse(authorizer.authorize(ALICE, HOST, CREATE, TOPIC, "d"));
    }

    @Test
    void theAclsSurviveAReloadAndADamagedFileIsRefused() throws IOException
    {
        final AclBinding kept = allow(TOPIC, "t", LITERAL, READ);
        final AclBinding removed = acl(GROUP, "g", PREFIXED, "User:bob", "10.1.1.1", ALL, DENY);
        final Authorizer first = with(false, kept, removed);
        first.change(List.of(), List.of(removed));
        final Authorizer again = Authorizer.standard(Set.of(), false);
        again.load(dir);
        assertEquals(Set.of(kept), again.acls().all());
        assertTrue(again.authorize(ALICE, HOST, READ, TOPIC, "t"));

        final Path file = Authorizer.fileIn(dir);
        final byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 1;
        Files.write(file, bytes);
        final IOException ex = assertThrows(IOException.class, () -> Authorizer.standard(Set.of(), false).load(dir));
        assertTrue(ex.getMessage().contains("checksum"), ex.getMessage());
    }

    /** Kafka's authorizeByResourceType, which an idempotent producer's InitProducerId asks of WRITE on topics. */
    @Test
    void someResourceOfATypeAsKafkasAuthorizeByResourceType() throws IOException
    {
        assertFalse(with(false).authorizeSome(ALICE, HOST, WRITE, TOPIC));
        assertTrue(with(true).authorizeSome(ALICE, HOST, WRITE, TOPIC), "no ACL on the made-up name, everyone allowed");
        assertTrue(with(false, allow(TOPIC, "t", LITERAL, WRITE)).authorizeSome(ALICE, HOST, WRITE, TOPIC));
        assertFalse(with(false, allow(TOPIC, "t", LITERAL, READ)).authorizeSome(ALICE, HOST, WRITE, TOPIC), "no implication");
        assertFalse(with(false, allow(TOPIC, "t", LITERAL, WRITE), acl(TOPIC, "t", LITERAL, ALICE, "*", WRITE, DENY))
            .authorizeSome(ALICE, HOST, WRITE, TOPIC), "denied by name");
        assertFalse(with(false, allow(TOPIC, "pay-in", PREFIXED, WRITE), acl(TOPIC, "pay", PREFIXED, ALICE, "*", ALL, DENY))
            .authorizeSome(ALICE, HOST, WRITE, TOPIC), "dominated by a denied prefix");
        assertTrue(with(false, allow(TOPIC, "pay", PREFIXED, WRITE), acl(TOPIC, "pay-in", PREFIXED, ALICE, "*", WRITE, DENY))
            .authorizeSome(ALICE, HOST, WRITE, TOPIC), "a longer denied prefix leaves some allowed");
        assertFalse(with(false, allow(TOPIC, "*", LITERAL, WRITE), acl(TOPIC, "*", LITERAL, ALICE, "*", WRITE, DENY))
            .authorizeSome(ALICE, HOST, WRITE, TOPIC), "a DENY on * wins");
        assertTrue(with(false).authorizeSome("User:admin", HOST, WRITE, TOPIC), "a super user");
    }

    @Test
    void aChangeMakesANewVersion() throws IOException
    {
        final Authorizer authorizer = with(false);
        final long before = authorizer.acls().version();
        authorizer.change(List.of(allow(TOPIC, "t", LITERAL, READ)), List.of());
        assertTrue(authorizer.acls().version() > before);
    }

    @Test
    void filtersMatchAsKafkasAclBindingFilter()
    {
        final AclBinding literal = allow(TOPIC, "payments", LITERAL, READ);
        final AclBinding wildcard = allow(TOPIC, "*", LITERAL, READ);
        final AclBinding prefixed = allow(TOPIC, "pay", PREFIXED, READ);
        final AclRules.Filter match = new AclRules.Filter(TOPIC, "payments", AclCodes.MATCH, null, null, AclCodes.ANY, AclCodes.ANY);
        assertTrue(match.matches(literal) && match.matches(wildcard) && match.matches(prefixed));
        final AclRules.Filter any = new AclRules.Filter(AclCodes.ANY, "pay", AclCodes.ANY, null, null, AclCodes.ANY, AclCodes.ANY);
        assertFalse(any.matches(literal));
        assertTrue(any.matches(prefixed), "ANY: the name as given, any pattern type");
        final AclRules.Filter exact = new AclRules.Filter(TOPIC, null, LITERAL, ALICE, "*", READ, ALLOW);
        assertTrue(exact.matches(literal) && exact.matches(wildcard));
        assertFalse(exact.matches(prefixed));
        assertFalse(new AclRules.Filter(TOPIC, null, AclCodes.ANY, "User:bob", null, AclCodes.ANY, AclCodes.ANY).matches(literal));
    }
}
