package io.ferrite.codegen;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Writes {@code ApiKeys}: every API of the schemas with its versions and header versions. */
final class ApiKeysGenerator
{
    static String generate(final List<MessageSpec> specs)
    {
        final Map<Integer, MessageSpec> requests = new TreeMap<>();
        final Map<Integer, MessageSpec> responses = new TreeMap<>();
        for (final MessageSpec m : specs)
        {
            if ("request".equals(m.type()))
            {
                requests.put(m.apiKey(), m);
            }
            else if ("response".equals(m.type()))
            {
                responses.put(m.apiKey(), m);
            }
        }
        int maxKey = 0;
        final JavaWriter w = new JavaWriter();
        w.line("package io.ferrite.wire.message;");
        w.blank();
        w.line("/**");
        w.line(" * The APIs of the Kafka protocol that kafka-clients %s declares, with the versions its schemas", "4.4");
        w.line(" * call valid and the header versions each uses. Generated at build time from the schemas.");
        w.line(" */");
        w.line("public enum ApiKeys {");
        int i = 0;
        for (final MessageSpec req : requests.values())
        {
            final MessageSpec resp = responses.get(req.apiKey());
            if (resp == null || !resp.valid().equals(req.valid()) || !resp.flexible().equals(req.flexible()))
            {
                throw new IllegalArgumentException(req.name() + ": response versions differ from the request's");
            }
            maxKey = Math.max(maxKey, req.apiKey());
            final String title = req.name().substring(0, req.name().length() - "Request".length());
            final short flexibleFrom = req.flexible().isEmpty() ? Short.MAX_VALUE : req.flexible().lowest();
            w.line("/** {@code %s}: versions %s, flexible %s%s. */", title, req.valid(), req.flexible(),
                req.latestVersionUnstable() ? ", latest unstable" : "");
            w.line("%s((short)%d, \"%s\", (short)%d, (short)%d, (short)%d, %s)%s", Names.upperSnake(title), req.apiKey(),
                title, req.valid().lowest(), req.valid().highest(), flexibleFrom, req.latestVersionUnstable(),
                ++i == requests.size() ? ";" : ",");
        }
        w.blank();
        w.line("private static final ApiKeys[] BY_ID = new ApiKeys[%d];", maxKey + 1);
        w.blank();
        w.line("static {");
        w.line("for (final ApiKeys k : values()) {");
        w.line("BY_ID[k.id] = k;");
        w.line("}");
        w.line("}");
        w.blank();
        w.line("public final short id;");
        w.line("public final String title;");
        w.line("public final short lowestVersion;");
        w.line("public final short highestVersion;");
        w.line("/** The first flexible version, or Short.MAX_VALUE when none is. */");
        w.line("public final short firstFlexibleVersion;");
        w.line("public final boolean latestVersionUnstable;");
        w.blank();
        w.line("ApiKeys(final short id, final String title, final short lowestVersion, final short highestVersion,");
        w.line("    final short firstFlexibleVersion, final boolean latestVersionUnstable) {");
        w.line("this.id = id;");
        w.line("this.title = title;");
        w.line("this.lowestVersion = lowestVersion;");
        w.line("this.highestVersion = highestVersion;");
        w.line("this.firstFlexibleVersion = firstFlexibleVersion;");
        w.line("this.latestVersionUnstable = latestVersionUnstable;");
        w.line("}");
        w.blank();
        w.line("/** The API with this key, or null when there is none. */");
        w.line("public static ApiKeys forId(final int id) {");
        w.line("return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;");
        w.line("}");
        w.blank();
        w.line("public boolean isVersionSupported(final short version) {");
        w.line("return version >= lowestVersion && version <= highestVersion;");
        w.line("}");
        w.blank();
        w.line("public boolean isFlexible(final short version) {");
        w.line("return version >= firstFlexibleVersion;");
        w.line("}");
        w.blank();
        w.line("/** Request header v2 (with tagged fields) for flexible versions, else v1. */");
        w.line("public short requestHeaderVersion(final short version) {");
        w.line("return isFlexible(version) ? (short)2 : (short)1;");
        w.line("}");
        w.blank();
        w.line("/**");
        w.line(" * Response header v1 for flexible versions, else v0; ApiVersions always answers with v0, so");
        w.line(" * that a client can read the answer whatever version it asked for.");
        w.line(" */");
        w.line("public short responseHeaderVersion(final short version) {");
        w.line("return this != API_VERSIONS && isFlexible(version) ? (short)1 : (short)0;");
        w.line("}");
        w.line("}");
        return w.toString();
    }
}
