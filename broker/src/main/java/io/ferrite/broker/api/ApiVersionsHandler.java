package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ApiVersionsRequestDecoder;
import io.ferrite.wire.message.ApiVersionsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.List;

/**
 * ApiVersions: the APIs this broker answers with their version ranges, and the features
 * ({@code transaction.version}, and Kafka's others at level 0). A version this broker does
 * not know (passed as -1 by the network thread) is answered in v0 with UNSUPPORTED_VERSION and the
 * ApiVersions range only, so the client can retry with one it has; client software names and
 * versions that break Kafka's pattern are INVALID_REQUEST.
 */
final class ApiVersionsHandler implements RequestHandler
{
    private final Apis apis;
    private final ApiVersionsRequestDecoder request = new ApiVersionsRequestDecoder();
    private final ApiVersionsResponseEncoder response = new ApiVersionsResponseEncoder();
    private List<ApiKeys> supported;
    static final String TRANSACTION_VERSION = "transaction.version";
    /** Transaction version 2 (KIP-890: produce adds the partition, EndTxn bumps the epoch) is the highest Kafka 4.4 knows. */
    static final short MAX_TRANSACTION_VERSION = 2;
    /**
     * Kafka 4.4's features of which Ferrite implements level 0 only: no eligible leader replicas (KIP-966), only the
     * classic group protocol (group.version 1 is KIP-848's), no share groups (KIP-932), no streams groups (KIP-1071),
     * a static KRaft voter set (kraft.version 1 is KIP-853's dynamic quorum).
     */
    static final String[] LEVEL_ZERO_FEATURES = {"eligible.leader.replicas.version", "group.version", "kraft.version",
        "share.version", "streams.version"};
    /** Any epoch of 0 or more makes a client take the finalized features (Kafka's is its metadata offset). */
    static final long FEATURES_EPOCH = 0;

    ApiVersionsHandler(final Apis apis)
    {
        this.apis = apis;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        if (supported == null)
        {
            supported = apis.supported(); // once all handlers are registered
        }
        if (version < 0)
        {
            response.wrap(out, outOffset, (short)0).errorCode(Errors.UNSUPPORTED_VERSION).apiKeys(1).next()
                .apiKey(ApiKeys.API_VERSIONS.id).minVersion(ApiKeys.API_VERSIONS.lowestVersion)
                .maxVersion(Apis.advertisedMax(ApiKeys.API_VERSIONS));
            return outOffset + response.finish();
        }
        request.wrap(in, offset, limit, version);
        final boolean valid = version < 3 || (validName(in, request.clientSoftwareNameOffset(), request.clientSoftwareNameLength())
            && validName(in, request.clientSoftwareVersionOffset(), request.clientSoftwareVersionLength()));
        response.wrap(out, outOffset, version).errorCode(valid ? Errors.NONE : Errors.INVALID_REQUEST);
        final ApiVersionsResponseEncoder.ApiVersion keys = response.apiKeys(valid ? supported.size() : 0);
        if (valid)
        {
            for (int i = 0; i < supported.size(); i++)
            {
                final ApiKeys key = supported.get(i);
                keys.next().apiKey(key.id).minVersion(advertisedMin(key)).maxVersion(Apis.advertisedMax(key));
            }
        }
        response.throttleTimeMs(0);
        if (valid && apis.transactionVersion() >= 0)
        {
            features(version, apis.transactionVersion());
        }
        return outOffset + response.finish();
    }

    /**
     * The features, in Kafka 4.4's shape (checked against one with {@code /work/shared/kafka-ref}):
     * {@code transaction.version} supported 0-2 and finalized at {@code level}, the one Ferrite implements; and
     * {@link #LEVEL_ZERO_FEATURES}, Kafka's features of which Ferrite has only level 0 (the behaviour before each),
     * supported 0-0 and not finalized, as Kafka leaves a feature at level 0 out of the finalized ones. Every supported
     * feature is left out below v4, as Kafka leaves out those whose minimum is 0 there. {@code metadata.version} is
     * not advertised: its levels (3.3-IV3 and up) name KRaft metadata-record formats, and Ferrite has no metadata
     * log to hold them. The epoch is a constant: the features never change on a running node. See the broker README.
     */
    private void features(final short version, final short level)
    {
        if (version >= 4)
        {
            final ApiVersionsResponseEncoder.SupportedFeatureKey supported =
                response.supportedFeatures(LEVEL_ZERO_FEATURES.length + 1);
            for (final String feature : LEVEL_ZERO_FEATURES)
            {
                supported.next().name(feature).minVersion((short)0).maxVersion((short)0);
            }
            supported.next().name(TRANSACTION_VERSION).minVersion((short)0).maxVersion(MAX_TRANSACTION_VERSION);
        }
        else
        {
            response.supportedFeatures(0);
        }
        response.finalizedFeaturesEpoch(FEATURES_EPOCH);
        response.finalizedFeatures(1).next().name(TRANSACTION_VERSION).maxVersionLevel(level).minVersionLevel(level);
    }

    /**
     * The lowest version advertised. Produce says 0 although v0-2 are gone (a request for them
     * closes the connection): Kafka 4 does the same because librdkafka refuses to compress when a
     * broker's Produce range does not start at 0 (KAFKA-18659).
     */
    static short advertisedMin(final ApiKeys key)
    {
        return key == ApiKeys.PRODUCE ? 0 : key.lowestVersion;
    }

    /** Kafka's rule for client software names and versions: {@code [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?}. */
    static boolean validName(final DirectBuffer in, final int offset, final int length)
    {
        if (length <= 0)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            final byte b = in.getByte(offset + i);
            final boolean alnum = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9');
            if (!alnum && ((i == 0 || i == length - 1) || (b != '-' && b != '.')))
            {
                return false;
            }
        }
        return true;
    }
}
