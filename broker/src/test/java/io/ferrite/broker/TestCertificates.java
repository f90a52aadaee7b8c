package io.ferrite.broker;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Key stores and trust stores for TLS tests, made by the JDK's {@code keytool} (no library to make certificates with),
 * its fifteen commands run one after another in one child JVM ({@link KeytoolBatch}): self-signed EC certificates, each
 * trusted by putting it in the other side's trust store.
 * <ul>
 * <li>{@code broker.p12}: the broker's key, CN=localhost with the names localhost and 127.0.0.1 (clients check them:
 * {@code ssl.endpoint.identification.algorithm=https} is kafka-clients' and librdkafka's default); {@code broker.pem}
 * its certificate, which clients trust (a PEM trust store, {@code ssl.truststore.type=PEM}; kcat's {@code ssl.ca.location});</li>
 * <li>{@code client.p12}: a client's key, {@link #CLIENT_DN}, its certificate in {@code broker-trust.p12}, the broker's
 * trust store; {@code expired.p12}: a key whose certificate, issued by {@code ca} (also in the broker's trust store),
 * ended yesterday;</li>
 * <li>{@code stranger.p12}: a client's key nobody trusts.</li>
 * </ul>
 * Every store's password is {@link #PASSWORD}.
 */
public final class TestCertificates
{
    public static final String PASSWORD = "store-secret";
    /** The client certificate's subject, as the JDK writes it (RFC 2253): Kafka's principal is {@code User:} and this. */
    public static final String CLIENT_DN = "CN=alice-client,OU=Tests,O=Ferrite";

    public final Path dir;
    /** The keytool commands {@link #make} gathers, in order, run by {@link KeytoolBatch}. */
    private final List<List<String>> commands = new ArrayList<>();

    private TestCertificates(final Path dir)
    {
        this.dir = dir;
    }

    private static TestCertificates shared;

    /** The stores of this JVM's tests, made once (keytool runs take seconds each on a loaded machine). */
    public static synchronized TestCertificates shared() throws IOException, InterruptedException
    {
        if (shared == null)
        {
            final Path dir = Files.createTempDirectory("ferrite-certs");
            dir.toFile().deleteOnExit();
            shared = make(dir);
        }
        return shared;
    }

    /**
     * Makes every store in {@code dir}: fifteen keytool commands in one child JVM (a JVM each took 10.8 s of a quiet
     * two-core machine's build per test JVM before issue 17's build work; one JVM running all fifteen about 1.5 s).
     */
    public static TestCertificates make(final Path dir) throws IOException, InterruptedException
    {
        Files.createDirectories(dir);
        final TestCertificates c = new TestCertificates(dir);
        c.keyPair("broker", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1");
        c.keyPair("client", CLIENT_DN);
        c.keyPair("stranger", "CN=stranger");
        c.keyPair("ca", "CN=Ferrite Test CA", "-ext", "bc:c");
        c.keyPair("expired", "CN=expired");
        c.export("broker");
        c.export("client");
        c.export("ca");
        // the expired client's certificate is issued by the CA the broker trusts, and ended yesterday: only its dates are wrong
        // (a certificate that is itself in the trust store is a trust anchor, whose dates PKIX does not check)
        c.commands.add(List.of("-certreq", "-alias", "expired", "-keystore", c.store("expired").toString(), "-storepass", PASSWORD,
            "-file", dir.resolve("expired.csr").toString()));
        c.commands.add(List.of("-gencert", "-rfc", "-alias", "ca", "-keystore", c.store("ca").toString(), "-storepass", PASSWORD,
            "-infile", dir.resolve("expired.csr").toString(), "-outfile", dir.resolve("expired.pem").toString(),
            "-startdate", "-3d", "-validity", "1"));
        c.trust("expired", "ca");
        c.trust("expired", "expired"); // the CA's reply: the key's chain is now the expired certificate and the CA
        c.trust("broker-trust", "client");
        c.trust("broker-trust", "ca");
        KeytoolBatch.run(dir, c.commands);
        c.commands.clear();
        return c;
    }

    public Path store(final String name)
    {
        return dir.resolve(name + ".p12");
    }

    /** The broker's certificate, PEM. */
    public Path brokerPem()
    {
        return dir.resolve("broker.pem");
    }

    private void keyPair(final String name, final String dn, final String... more)
    {
        final List<String> args = new ArrayList<>(List.of("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", dn, "-storetype", "PKCS12", "-keystore", store(name).toString(), "-storepass", PASSWORD, "-keypass", PASSWORD));
        if (!List.of(more).contains("-validity"))
        {
            args.addAll(List.of("-validity", "30"));
        }
        args.addAll(List.of(more));
        commands.add(args);
    }

    private void export(final String name)
    {
        commands.add(List.of("-exportcert", "-rfc", "-alias", name, "-keystore", store(name).toString(), "-storepass", PASSWORD,
            "-file", dir.resolve(name + ".pem").toString()));
    }

    private void trust(final String trustStore, final String name)
    {
        commands.add(List.of("-importcert", "-noprompt", "-alias", name, "-file", dir.resolve(name + ".pem").toString(), "-storetype", "PKCS12",
            "-keystore", store(trustStore).toString(), "-storepass", PASSWORD));
    }

    /** A JDK client context that trusts the broker's certificate, with the key of {@code keyStore} (null: none). */
    public SSLContext clientContext(final String keyStore) throws Exception
    {
        final KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream pem = Files.newInputStream(brokerPem()))
        {
            trust.setCertificateEntry("broker", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        final TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (keyStore != null)
        {
            final KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store(keyStore)))
            {
                keys.load(in, PASSWORD.toCharArray());
            }
            kmf = KeyManagerFactory.getInstance("SunX509");
            kmf.init(keys, PASSWORD.toCharArray());
        }
        final SSLContext context = SSLContext.getInstance("TLSv1.3");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }
}
