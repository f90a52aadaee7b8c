// Raw re-authentication exchanges against a live Kafka 4.4, printing each answer; not part of the build. The node of
// 2026-12-07 12:02Z was ../kafka-acl-node.sh's configuration without its authorizer and super.users lines, with users
// alice and bob only (the inter-broker login alice), and with: sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,
// listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
// connections.max.reauth.ms=60000 and connection.failed.authentication.delay.ms=100.
// javac -cp "$(cat ~/.cache/kafka-ref-4.4.0/classpath.txt)" ReauthCheck.java && java -cp "$(cat ~/.cache/kafka-ref-4.4.0/classpath.txt):." ReauthCheck PORT
// What it printed: the "Re-authentication" paragraph of docs/operations.md.
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.*;
import org.apache.kafka.common.requests.ResponseHeader;
import java.io.*;
import java.net.*;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

public class ReauthCheck {
    static int port;
    static class Raw implements AutoCloseable {
        Socket s; int id;
        Raw() throws IOException { s = new Socket("127.0.0.1", port); s.setSoTimeout(10000); }
        int send(ApiKeys api, short v, ApiMessage data) throws IOException {
            int cid = ++id;
            RequestHeaderData h = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(v).setCorrelationId(cid).setClientId("c");
            short hv = api.requestHeaderVersion(v);
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = h.size(cache, hv) + data.size(cache, v);
            ByteBuffer b = ByteBuffer.allocate(4 + size).putInt(size);
            h.write(new ByteBufferAccessor(b), cache, hv); data.write(new ByteBufferAccessor(b), cache, v);
            s.getOutputStream().write(b.array()); s.getOutputStream().flush();
            return cid;
        }
        ByteBuffer recv(ApiKeys api, short v) throws IOException {
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] bytes = new byte[in.readInt()]; in.readFully(bytes);
            ByteBuffer r = ByteBuffer.wrap(bytes); ResponseHeader.parse(r, api.responseHeaderVersion(v)); return r;
        }
        SaslHandshakeResponseData hs(String m) throws IOException { send(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism(m)); return new SaslHandshakeResponseData(new ByteBufferAccessor(recv(ApiKeys.SASL_HANDSHAKE, (short)1)), (short)1); }
        SaslAuthenticateResponseData auth(String tok) throws IOException { send(ApiKeys.SASL_AUTHENTICATE, (short)2, new SaslAuthenticateRequestData().setAuthBytes(tok.getBytes(StandardCharsets.UTF_8))); return new SaslAuthenticateResponseData(new ByteBufferAccessor(recv(ApiKeys.SASL_AUTHENTICATE, (short)2)), (short)2); }
        String plain(String u, String p) throws IOException { SaslHandshakeResponseData h = hs("PLAIN"); SaslAuthenticateResponseData a = auth("\0" + u + "\0" + p); return "handshake " + h.errorCode() + " auth " + a.errorCode() + " '" + a.errorMessage() + "' lifetime " + a.sessionLifetimeMs(); }
        String meta() { try { send(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(null)); recv(ApiKeys.METADATA, (short)12); return "metadata answered"; } catch (IOException e) { return "metadata: " + e; } }
        String closed() { try { int b = s.getInputStream().read(); return b < 0 ? "closed" : "got byte " + b; } catch (IOException e) { return "read: " + e; } }
        public void close() throws IOException { s.close(); }
    }
    public static void main(String[] a) throws Exception {
        port = Integer.parseInt(a[0]);
        try (Raw r = new Raw()) { System.out.println("first: " + r.plain("alice", "alice-secret")); System.out.println(r.meta());
            System.out.println("reauth: " + r.plain("alice", "alice-secret")); System.out.println(r.meta());
            SaslHandshakeResponseData soon = r.hs("PLAIN"); System.out.println("too soon handshake: " + soon.errorCode() + " mechs " + soon.mechanisms());
            SaslAuthenticateResponseData soonA = r.auth(""); System.out.println("too soon auth: " + soonA.errorCode() + " '" + soonA.errorMessage() + "'");
            System.out.println(r.meta()); }
        try (Raw r = new Raw()) { r.plain("alice", "alice-secret"); System.out.println("as bob: " + r.plain("bob", "bob-secret")); System.out.println(r.closed()); }
        try (Raw r = new Raw()) { r.plain("alice", "alice-secret"); System.out.println("wrong pw: " + r.plain("alice", "x")); System.out.println(r.closed()); }
        try (Raw r = new Raw()) { r.plain("alice", "alice-secret"); System.out.println("other mech handshake: " + r.hs("SCRAM-SHA-256").errorCode());
            r.send(ApiKeys.SASL_AUTHENTICATE, (short)2, new SaslAuthenticateRequestData().setAuthBytes(new byte[0])); System.out.println("then: " + r.closed()); }
        try (Raw r = new Raw()) { r.plain("alice", "alice-secret"); r.send(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
            r.send(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(null));
            System.out.println("pipelined: handshake " + new SaslHandshakeResponseData(new ByteBufferAccessor(r.recv(ApiKeys.SASL_HANDSHAKE, (short)1)), (short)1).errorCode());
            try { ByteBuffer m = r.recv(ApiKeys.METADATA, (short)12); System.out.println("metadata answered: " + new MetadataResponseData(new ByteBufferAccessor(m), (short)12)); } catch (IOException e) { System.out.println("metadata: " + e); }
            System.out.println(r.closed()); }
    }
}
