package io.ferrite.broker.scram;

import org.apache.kafka.common.security.scram.ScramExtensionsCallback;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SCRAM exchange against kafka-clients 4.4's own {@code ScramSaslClient} with the extensions its callback can add
 * (three, in the client's order, signed as sent: Kafka 4.4's server rebuilds them in an order of its own and fails such a
 * client at random), a wrong password, a delegation-token login refused, a third message; the
 * credentials' file written, read back whole, and refused when cut short or altered.
 */
class ScramServerTest
{
    @TempDir
    Path dir;

    /** Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC, from the JDK. */
    static byte[] hi(final ScramMechanism mechanism, final String password, final byte[] salt, final int iterations) throws Exception
    {
        final String algorithm = mechanism == ScramMechanism.SCRAM_SHA_256 ? "PBKDF2WithHmacSHA256" : "PBKDF2WithHmacSHA512";
        final int bits = mechanism == ScramMechanism.SCRAM_SHA_256 ? 256 : 512;
        return SecretKeyFactory.getInstance(algorithm).generateSecret(new PBEKeySpec(password.toCharArray(), salt, iterations, bits)).getEncoded();
    }

    private ScramCredentials credentials(final ScramMechanism mechanism, final String user, final String password) throws Exception
    {
        final ScramCredentials credentials = new ScramCredentials();
        credentials.load(dir);
        final byte[] salt = "pepper".getBytes(StandardCharsets.US_ASCII);
        credentials.replace(Map.of(user, Map.of(mechanism, ScramCredential.of(mechanism, salt, hi(mechanism, password, salt, 4096), 4096))));
        return credentials;
    }

    private static ScramSaslClient client(final ScramMechanism mechanism, final String user, final String password,
        final Map<String, String> extensions) throws Exception
    {
        return new ScramSaslClient(org.apache.kafka.common.security.scram.internals.ScramMechanism.forMechanismName(mechanism.mechanismName()),
            callbacks ->
            {
                for (final javax.security.auth.callback.Callback c : callbacks)
                {
                    if (c instanceof NameCallback n)
                    {
                        n.setName(user);
                    }
                    else if (c instanceof PasswordCallback p)
                    {
                        p.setPassword(password.toCharArray());
                    }
                    else if (c instanceof ScramExtensionsCallback e)
                    {
                        e.extensions(extensions);
                    }
                }
            });
    }

    @Test
    void kafkasClientAuthenticatesWithAndWithoutExtensions() throws Exception
    {
        for (final ScramMechanism mechanism : ScramMechanism.values())
        {
            final ScramCredentials credentials = credentials(mechanism, "alice", "pw");
            for (final Map<String, String> extensions : List.of(Map.<String, String>of(), Map.of("zeta", "1", "alpha", "2", "mid", "3")))
            {
                final ScramSaslClient client = client(mechanism, "alice", "pw", extensions);
                final ScramServer server = new ScramServer(mechanism, credentials);
                final byte[] serverFirst = server.evaluate(client.evaluateChallenge(new byte[0]));
                final byte[] serverFinal = server.evaluate(client.evaluateChallenge(serverFirst));
                assertNull(server.failure(), mechanism + " " + extensions);
                client.evaluateChallenge(serverFinal); // the client checks the server's signature
                assertTrue(server.complete() && client.isComplete());
                assertEquals("alice", server.user());
            }
            final ScramServer server = new ScramServer(mechanism, credentials);
            final ScramSaslClient wrong = client(mechanism, "alice", "not-pw", Map.of());
            assertNull(server.evaluate(wrong.evaluateChallenge(server.evaluate(wrong.evaluateChallenge(new byte[0])))));
            assertEquals("Authentication failed during authentication due to invalid credentials with SASL mechanism "
                + mechanism.mechanismName(), server.failure());
            assertFalse(server.complete());
        }
    }

    @Test
    void aDelegationTokenLoginIsRefusedFerriteIssuesNone() throws Exception
    {
        final ScramCredentials credentials = credentials(ScramMechanism.SCRAM_SHA_256, "alice", "pw");
        final ScramServer server = new ScramServer(ScramMechanism.SCRAM_SHA_256, credentials);
        assertNull(server.evaluate(client(ScramMechanism.SCRAM_SHA_256, "alice", "pw", Map.of("tokenauth", "true"))
            .evaluateChallenge(new byte[0])));
        assertTrue(server.failure().startsWith("Authentication failed during authentication due to invalid credentials"));
    }

    @Test
    void theFileIsReadBackWholeAndRefusedWhenDamaged() throws Exception
    {
        credentials(ScramMechanism.SCRAM_SHA_512, "bob", "pw");
        final ScramCredentials reread = new ScramCredentials();
        reread.load(dir);
        final ScramCredential c = reread.lookup(ScramMechanism.SCRAM_SHA_512, "bob");
        final byte[] saltedPassword = hi(ScramMechanism.SCRAM_SHA_512, "pw", c.salt(), 4096);
        assertEquals(ScramCredential.of(ScramMechanism.SCRAM_SHA_512, c.salt(), saltedPassword, 4096), c);
        assertEquals("ScramCredential(iterations=4096)", c.toString());
        final byte[] file = Files.readAllBytes(ScramCredentials.fileIn(dir));
        assertFalse(contains(file, saltedPassword), "the salted password is not stored");
        for (final int cut : new int[] {0, 10, file.length - 1})
        {
            Files.write(ScramCredentials.fileIn(dir), java.util.Arrays.copyOf(file, cut));
            final IOException refused = assertThrows(IOException.class, () -> new ScramCredentials().load(dir));
            assertTrue(refused.getMessage().startsWith("damaged: "), refused.getMessage());
        }
        Files.write(ScramCredentials.fileIn(dir), file);
        final ScramCredentials again = new ScramCredentials();
        again.load(dir);
        assertArrayEquals(c.storedKey(), again.lookup(ScramMechanism.SCRAM_SHA_512, "bob").storedKey());
    }

    private static boolean contains(final byte[] haystack, final byte[] needle)
    {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (haystack[i + j] != needle[j])
                {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    @Test
    void aThirdMessageFails() throws Exception
    {
        final ScramCredentials credentials = credentials(ScramMechanism.SCRAM_SHA_256, "alice", "pw");
        final ScramSaslClient client = client(ScramMechanism.SCRAM_SHA_256, "alice", "pw", Map.of());
        final ScramServer server = new ScramServer(ScramMechanism.SCRAM_SHA_256, credentials);
        server.evaluate(client.evaluateChallenge(server.evaluate(client.evaluateChallenge(new byte[0]))));
        assertTrue(server.complete());
        assertNull(server.evaluate(new byte[0]));
    }

    @Test
    void longNamesAuthorizationIdsExtensionListsAndProofsAreParsedWithoutRecursion() throws Exception
    {
        // a backtracking regex recursed once per character of a name here, and overflowed the stack near 5 000
        final String longName = "a".repeat(20_000);
        final ScramMessages.ClientFirst first = ScramMessages.clientFirst(("n,,n=" + longName + ",r=abc").getBytes(StandardCharsets.UTF_8));
        assertEquals(longName, first.user());
        assertEquals("n=" + longName + ",r=abc", first.bare());
        final String escaped = "=2Cb=3D".repeat(5_000);
        final ScramMessages.ClientFirst withAuthzid = ScramMessages.clientFirst(("n,a=" + escaped + ",n=" + escaped + ",r=abc")
            .getBytes(StandardCharsets.UTF_8));
        assertEquals(",b=".repeat(5_000), withAuthzid.user());
        assertEquals(escaped, withAuthzid.authorizationId(), "the authorization id as sent, as Kafka keeps it");
        final StringBuilder extensions = new StringBuilder("n,,m=reserved,n=alice,r=abc");
        for (int i = 0; i < 2_000; i++)
        {
            extensions.append(",x").append((char)('a' + i % 26)).append(i % 26 == 25 ? "y" : "").append("=v").append(i);
        }
        final ScramMessages.ClientFirst many = ScramMessages.clientFirst(extensions.toString().getBytes(StandardCharsets.UTF_8));
        assertEquals("alice", many.user());
        assertEquals("v1999", many.extensions().get("xx")); // a later key wins, as in Kafka's Utils.parseMap
        final String longProof = "AAAA".repeat(20_000);
        final ScramMessages.ClientFinal last = ScramMessages.clientFinal(("c=biws,r=" + "n".repeat(20_000) + ",p=" + longProof)
            .getBytes(StandardCharsets.UTF_8));
        assertEquals(60_000, last.proof().length);
        assertEquals("c=biws,r=" + "n".repeat(20_000), last.withoutProof());
    }

    @Test
    void theGrammarRefusesWhatKafkasRefuses()
    {
        for (final String bad : List.of("", "n", "n,", "n,,", "y,,n=a,r=b", "p=x,,n=a,r=b", "n,,n=a", "n,,n=,r=b", "n,,n=a,r=", "n,,n=a=,r=b",
            "n,,n=a=2D,r=b", "n,,n=a,r=b c", "n,,n=a,r=b,", "n,,n=a,r=b,x=", "n,,n=a,r=b,1=c", "n,,n=a,r=b,x=c=d", "n,a=,n=a,r=b",
            "n,b=a,n=a,r=b", "n,,m=,n=a,r=b", "n,,r=b,n=a", "n,,n=\u00e9,r=b", "n,,n=a,r=b\u0000"))
        {
            assertNull(ScramMessages.clientFirst(bad.getBytes(StandardCharsets.UTF_8)), bad);
        }
        for (final String good : List.of("n,,n=a,r=b", "n,a=a,n=a,r=b", "n,,m=x y,n=a,r=b", "n,,n=a b\u0001,r=!~", "n,,n=a,r=b,Xy=z y"))
        {
            assertTrue(ScramMessages.clientFirst(good.getBytes(StandardCharsets.UTF_8)) != null, good);
        }
        for (final String bad : List.of("", "c=biws", "c=biws,r=a", "c=biw,r=a,p=AAAA", "c=biws,r=a,p=AAA", "c=biws,r=a,p=A===",
            "c=biws,r=a,p=AA=A", "c=biws,r=,p=AAAA", "r=a,c=biws,p=AAAA", "c=biws,r=a,x=y=,p=AAAA", "c=biws,r=a,p=AAAA,", "c=biws,r=a b,p=AAAA",
            "c=bi-s,r=a,p=AAAA"))
        {
            assertNull(ScramMessages.clientFinal(bad.getBytes(StandardCharsets.UTF_8)), bad);
        }
        for (final String good : List.of("c=,r=a,p=", "c=biws,r=a,p=AAAA", "c=biws,r=a,p=AA==", "c=biws,r=a,p=AAA=", "c=biws,r=a,xy=z,p=AAAA"))
        {
            assertTrue(ScramMessages.clientFinal(good.getBytes(StandardCharsets.UTF_8)) != null, good);
        }
    }

    @Test
    void anEscapedAuthorizationIdIsComparedAsSentAsKafkaComparesIt() throws Exception
    {
        final ScramCredentials credentials = credentials(ScramMechanism.SCRAM_SHA_256, "a,b", "pw");
        final ScramServer refused = new ScramServer(ScramMechanism.SCRAM_SHA_256, credentials);
        assertNull(refused.evaluate("n,a=a=2Cb,n=a=2Cb,r=abc".getBytes(StandardCharsets.UTF_8)));
        assertEquals(ScramServer.AUTHZID_MISMATCH, refused.failure());
        final ScramServer plain = new ScramServer(ScramMechanism.SCRAM_SHA_256, credentials(ScramMechanism.SCRAM_SHA_256, "ab", "pw"));
        assertTrue(plain.evaluate("n,a=ab,n=ab,r=abc".getBytes(StandardCharsets.UTF_8)) != null, "an authorization id equal to the user passes");
    }

    @Test
    void aFailedDirectoryFsyncAfterTheRenameLeavesMemoryAsTheFile() throws Exception
    {
        final ScramCredentials credentials = new ScramCredentials(d ->
        {
            throw new IOException("injected: fsync of " + d);
        });
        credentials.load(dir);
        final byte[] salt = "pepper".getBytes(StandardCharsets.US_ASCII);
        final ScramCredential bob = ScramCredential.of(ScramMechanism.SCRAM_SHA_256, salt, hi(ScramMechanism.SCRAM_SHA_256, "pw", salt, 4096), 4096);
        final IOException failed = assertThrows(ScramCredentials.NotDurableException.class,
            () -> credentials.replace(Map.of("bob", Map.of(ScramMechanism.SCRAM_SHA_256, bob))));
        assertTrue(failed.getMessage().contains("injected"), failed.getMessage());
        final ScramCredentials onDisk = new ScramCredentials();
        onDisk.load(dir);
        assertEquals(bob, onDisk.lookup(ScramMechanism.SCRAM_SHA_256, "bob"), "the rename was made: the file holds bob");
        assertEquals(bob, credentials.lookup(ScramMechanism.SCRAM_SHA_256, "bob"), "and so does memory: both agree");
    }
}
