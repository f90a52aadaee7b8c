package io.ferrite.perf.sidebyside;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The TLS and SASL of the side-by-side runner's secured suite ({@code --security}, {@link TlsSuite}): one broker key
 * and certificate made at run time by the JDK's {@code keytool} (EC P-256, CN=localhost with the names localhost and
 * 127.0.0.1, so that the clients' default host name check passes), the same key store and the same {@code ssl.*} and
 * {@code sasl.*} lines for Kafka and Ferrite, the clients' properties for each security protocol, and the SCRAM user
 * made on each broker with Admin (AlterUserScramCredentials, as {@code kafka-configs.sh --add-config} makes one).
 */
final class BrokerSecurity
{
    static final String PLAINTEXT = "PLAINTEXT";
    static final String SSL = "SSL";
    static final String SASL_SSL = "SASL_SSL";
    /** The protocols the suite measures over; PLAINTEXT is the same brokers' baseline. */
    static final List<String> PROTOCOLS = List.of(PLAINTEXT, SSL, SASL_SSL);
    static final String MECHANISM = "SCRAM-SHA-512";
    /** Kafka's default iteration count for a SCRAM credential made by kafka-configs.sh. */
    static final int SCRAM_ITERATIONS = 4096;
    private static final String USER = "bench";
    // a benchmark's throw-away credentials, made afresh each run in a temporary directory
    private static final String USER_PASSWORD = "bench-secret";
    private static final String STORE_PASSWORD = "bench-store";
    private static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";

    final Path dir;
    /** {@code ssl.enabled.protocols} and {@code ssl.protocol} of both brokers and the clients. */
    final String tlsProtocol;
    /** {@code ssl.cipher.suites} of both brokers and the clients; empty: the JDK's defaults. */
    final String cipherSuites;

    private BrokerSecurity(final Path dir, final String tlsProtocol, final String cipherSuites)
    {
        this.dir = dir;
        this.tlsProtocol = tlsProtocol;
        this.cipherSuites = cipherSuites;
    }

    /** Makes the broker's key store and the clients' PEM trust store in {@code dir} with two keytool commands. */
    static BrokerSecurity make(final Path dir, final String tlsProtocol, final String cipherSuites)
        throws IOException, InterruptedException
    {
        Files.createDirectories(dir);
        final BrokerSecurity s = new BrokerSecurity(dir, tlsProtocol, cipherSuites);
        s.keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
            "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "30", "-storetype", "PKCS12",
            "-keystore", s.keyStore().toString(), "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD);
        s.keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", s.keyStore().toString(), "-storepass", STORE_PASSWORD,
            "-file", s.certificate().toString());
        return s;
    }

    Path keyStore()
    {
        return dir.resolve("broker.p12");
    }

    /** The broker's certificate (PEM): the clients' trust store. */
    Path certificate()
    {
        return dir.resolve("broker.pem");
    }

    private void keytool(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        final Path log = dir.resolve("keytool.log");
        // stdin from /dev/null: a command that would prompt fails instead of waiting
        final Process p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS))
        {
            p.destroyForcibly().waitFor();
            throw new IOException("keytool " + args[0] + " did not end within 120 s");
        }
        if (p.exitValue() != 0)
        {
            throw new IOException("keytool " + args[0] + " failed (exit " + p.exitValue() + "): " + Files.readString(log));
        }
    }

    /** The listeners' security protocol map of both brokers (Kafka's adds its controller listener). */
    static String protocolMap()
    {
        return "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL";
    }

    /** The {@code ssl.*} and {@code sasl.*} settings, the same lines for Kafka's server.properties and Ferrite's overrides. */
    List<String> brokerLines()
    {
        final List<String> lines = new ArrayList<>(List.of(
            "ssl.keystore.type=PKCS12",
            "ssl.keystore.location=" + keyStore(),
            "ssl.keystore.password=" + STORE_PASSWORD,
            "ssl.key.password=" + STORE_PASSWORD,
            "ssl.enabled.protocols=" + tlsProtocol,
            "ssl.protocol=" + tlsProtocol,
            "ssl.client.auth=none",
            "sasl.enabled.mechanisms=" + MECHANISM,
            // Kafka's server needs a login module per listener and mechanism; the users are the SCRAM credentials
            "listener.name.sasl_ssl." + MECHANISM.toLowerCase(java.util.Locale.ROOT) + ".sasl.jaas.config=" + SCRAM_MODULE + " required;"));
        if (!cipherSuites.isEmpty())
        {
            lines.add("ssl.cipher.suites=" + cipherSuites);
        }
        return lines;
    }

    /** A client's security properties for {@code protocol} (none for PLAINTEXT). */
    Properties client(final String protocol)
    {
        final Properties p = new Properties();
        if (PLAINTEXT.equals(protocol))
        {
            return p;
        }
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
        p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certificate().toString());
        p.put(SslConfigs.SSL_ENABLED_PROTOCOLS_CONFIG, tlsProtocol);
        p.put(SslConfigs.SSL_PROTOCOL_CONFIG, tlsProtocol);
        if (!cipherSuites.isEmpty())
        {
            p.put(SslConfigs.SSL_CIPHER_SUITES_CONFIG, cipherSuites);
        }
        if (SASL_SSL.equals(protocol))
        {
            p.put(SaslConfigs.SASL_MECHANISM, MECHANISM);
            p.put(SaslConfigs.SASL_JAAS_CONFIG, SCRAM_MODULE + " required username=\"" + USER + "\" password=\"" + USER_PASSWORD + "\";");
        }
        return p;
    }

    /**
     * Makes the SCRAM user with Admin over {@code plaintextBootstrap}, then waits until a SASL_SSL Admin at
     * {@code saslSslBootstrap} is served (Kafka applies the credential once its metadata log has it).
     */
    void addScramUser(final String plaintextBootstrap, final String saslSslBootstrap, final long timeoutMs) throws Exception
    {
        final Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, plaintextBootstrap);
        try (Admin admin = Admin.create(a))
        {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(USER,
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS), USER_PASSWORD)))
                .all().get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        final Properties s = client(SASL_SSL);
        s.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, saslSslBootstrap);
        s.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000);
        s.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true)
        {
            // a new client each try: a failed authentication is not retried by the same client
            try (Admin admin = Admin.create(s))
            {
                admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
                return;
            }
            catch (final ExecutionException | java.util.concurrent.TimeoutException ex)
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw new IOException("SASL_SSL with " + MECHANISM + " not served " + timeoutMs + " ms after the user was made", ex);
                }
                Thread.sleep(50);
            }
        }
    }

    /**
     * The TLS version and cipher suite a handshake with the listener at {@code port} gives, as the clients are
     * configured (the broker's certificate trusted, host name checked): what the run measured, said in its settings.
     */
    String negotiated(final int port) throws IOException, GeneralSecurityException
    {
        final KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream pem = Files.newInputStream(certificate()))
        {
            trust.setCertificateEntry("broker", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        final TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        final SSLContext context = SSLContext.getInstance(tlsProtocol);
        context.init(null, tmf.getTrustManagers(), null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port))
        {
            socket.setSoTimeout(30_000);
            final SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            parameters.setProtocols(tlsProtocol.split(","));
            if (!cipherSuites.isEmpty())
            {
                parameters.setCipherSuites(cipherSuites.split(","));
            }
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            return socket.getSession().getProtocol() + " " + socket.getSession().getCipherSuite();
        }
    }

    /** Deletes the stores. */
    void delete() throws IOException
    {
        try (var files = Files.walk(dir))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    /** What the run's settings say of the security (both brokers alike). */
    String describe()
    {
        return "TLS: " + tlsProtocol + " only (ssl.enabled.protocols and ssl.protocol on both brokers and the clients), cipher "
            + "suites " + (cipherSuites.isEmpty() ? "the JDK's defaults on both" : cipherSuites) + "; one key store for both "
            + "brokers (PKCS12, an EC P-256 key and self-signed certificate made by keytool at the run's start, CN=localhost, "
            + "SAN localhost and 127.0.0.1), ssl.client.auth=none; the clients trust the certificate (a PEM trust store) and "
            + "check the host name (kafka-clients' default https); SASL_SSL: " + MECHANISM + " with a user made by Admin's "
            + "alterUserScramCredentials (" + SCRAM_ITERATIONS + " iterations) on each broker, Kafka's listener given "
            + SCRAM_MODULE.substring(SCRAM_MODULE.lastIndexOf('.') + 1) + " as its JAAS config; each broker also has a PLAINTEXT "
            + "listener (Kafka's inter-broker listener, the runner's start-up check and the SCRAM user's creation)";
    }

    static String lower(final String protocol)
    {
        return protocol.toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
