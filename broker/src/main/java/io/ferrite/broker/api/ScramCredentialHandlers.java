package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.admin.AdminCommand;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.scram.ScramCredentials;
import io.ferrite.broker.scram.ScramRules;
import io.ferrite.wire.message.AlterUserScramCredentialsRequestDecoder;
import io.ferrite.wire.message.AlterUserScramCredentialsResponseEncoder;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeUserScramCredentialsRequestDecoder;
import io.ferrite.wire.message.DescribeUserScramCredentialsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * DescribeUserScramCredentials and AlterUserScramCredentials ({@code Admin.describeUserScramCredentials} and
 * {@code alterUserScramCredentials}, {@code kafka-configs.sh --entity-type users}), answered as Kafka 4.4 answers them
 * ({@link ScramRules}). Describe reads the published credentials on the network thread; an alteration runs on the
 * admin agent, one after another, which checks it against the credentials as they are then, writes the credentials'
 * file durably and publishes them before the answer goes out.
 *
 * <p>Who may call them: Kafka checks DESCRIBE, and ALTER, on the cluster — with no authorizer configured every caller
 * may, so without {@code authorizer.class.name} any client that reached the broker may (on a SASL listener, once
 * authenticated); with it, CLUSTER_AUTHORIZATION_FAILED as Kafka answers. The salted password a request carries is turned into the two keys on the agent and then zeroed;
 * nothing of it is logged.
 */
public final class ScramCredentialHandlers
{
    private static final Logger LOG = LoggerFactory.getLogger(ScramCredentialHandlers.class);

    private ScramCredentialHandlers()
    {
    }

    /** Registers both APIs (advertised by ApiVersions from then on); {@code waker} wakes the network thread of {@code apis}. */
    public static void register(final Apis apis, final ScramCredentials credentials, final AdminAgent admin, final Runnable waker)
    {
        apis.registerLazily(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, () -> new Describe(credentials))
            .registerLazily(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, () -> new Alter(credentials, admin, waker));
    }

    private static final class Describe implements RequestHandler
    {
        private final ScramCredentials credentials;
        private final DescribeUserScramCredentialsRequestDecoder request = new DescribeUserScramCredentialsRequestDecoder();
        private final DescribeUserScramCredentialsResponseEncoder response = new DescribeUserScramCredentialsResponseEncoder();

        Describe(final ScramCredentials credentials)
        {
            this.credentials = credentials;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final DescribeUserScramCredentialsRequestDecoder.UserName names = request.users();
            final List<String> users = new ArrayList<>();
            while (names.hasNext())
            {
                users.add(names.next().name());
            }
            if (!Access.cluster(connection, AclCodes.DESCRIBE)) // Kafka: DESCRIBE on the cluster, else the request's error
            {
                // Kafka 4.4's getErrorResponse: the error, and one result per user asked with the error and no user name
                final DescribeUserScramCredentialsResponseEncoder.DescribeUserScramCredentialsResult r = response.wrap(out, outOffset,
                    version).throttleTimeMs(0).errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).errorMessage(null).results(users.size());
                for (int i = 0; i < users.size(); i++)
                {
                    r.next().user("").errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).errorMessage(null).credentialInfos(0);
                }
                return outOffset + response.finish();
            }
            final List<ScramRules.Described> described = ScramRules.describe(credentials.snapshot(), users);
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.NONE).errorMessage(null);
            final DescribeUserScramCredentialsResponseEncoder.DescribeUserScramCredentialsResult r = response.results(described.size());
            for (final ScramRules.Described d : described)
            {
                r.next().user(d.user()).errorCode(d.errorCode()).errorMessage(d.errorMessage());
                final DescribeUserScramCredentialsResponseEncoder.CredentialInfo info = r.credentialInfos(d.credentialInfos().size());
                for (final int[] mechanismAndIterations : d.credentialInfos())
                {
                    info.next().mechanism((byte)mechanismAndIterations[0]).iterations(mechanismAndIterations[1]);
                }
            }
            return outOffset + response.finish();
        }
    }

    private static final class Alter implements RequestHandler
    {
        private final ScramCredentials credentials;
        private final AdminAgent admin;
        private final Runnable waker;
        private final AlterUserScramCredentialsRequestDecoder request = new AlterUserScramCredentialsRequestDecoder();
        private final AlterUserScramCredentialsResponseEncoder response = new AlterUserScramCredentialsResponseEncoder();

        Alter(final ScramCredentials credentials, final AdminAgent admin, final Runnable waker)
        {
            this.credentials = credentials;
            this.admin = admin;
            this.waker = waker;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final List<ScramRules.Deletion> deletions = new ArrayList<>();
            final Set<String> users = new LinkedHashSet<>();
            final AlterUserScramCredentialsRequestDecoder.ScramCredentialDeletion d = request.deletions();
            while (d.hasNext())
            {
                d.next();
                deletions.add(new ScramRules.Deletion(d.name(), d.mechanism()));
                users.add(d.name());
            }
            final List<ScramRules.Upsertion> upsertions = new ArrayList<>();
            final AlterUserScramCredentialsRequestDecoder.ScramCredentialUpsertion u = request.upsertions();
            while (u.hasNext())
            {
                u.next();
                upsertions.add(new ScramRules.Upsertion(u.name(), u.mechanism(), u.iterations(), u.salt(), u.saltedPassword()));
                users.add(u.name());
            }
            if (!Access.cluster(connection, AclCodes.ALTER)) // Kafka: ALTER on the cluster, else each user answered the error
            {
                final AlterUserScramCredentialsResponseEncoder.AlterUserScramCredentialsResult r = response.wrap(out, outOffset, version)
                    .throttleTimeMs(0).results(users.size());
                users.forEach(user -> r.next().user(user).errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).errorMessage(null));
                return outOffset + response.finish();
            }
            final Alteration alteration = new Alteration(credentials, deletions, upsertions, waker);
            return AdminAnswer.submit(admin, alteration, (o, at, timedOut) -> write(o, at, version, alteration, users, timedOut),
                connection);
        }

        private int write(final MutableDirectBuffer out, final int outOffset, final short version, final Alteration alteration,
            final Set<String> users, final boolean timedOut)
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            if (timedOut) // the agent closed before it took it: nothing was changed
            {
                final AlterUserScramCredentialsResponseEncoder.AlterUserScramCredentialsResult r = response.results(users.size());
                users.forEach(user -> r.next().user(user).errorCode(Errors.REQUEST_TIMED_OUT).errorMessage(null));
                return outOffset + response.finish();
            }
            final AlterUserScramCredentialsResponseEncoder.AlterUserScramCredentialsResult r = response.results(alteration.results.size());
            for (final ScramRules.Result result : alteration.results)
            {
                r.next().user(result.user()).errorCode(result.errorCode()).errorMessage(result.errorMessage());
            }
            return outOffset + response.finish();
        }
    }

    /** An alteration on the admin agent: checked against the credentials then, written, published. */
    private static final class Alteration extends AdminCommand
    {
        private final ScramCredentials credentials;
        private final List<ScramRules.Deletion> deletions;
        private final List<ScramRules.Upsertion> upsertions;
        /** The answers (published by the command's release of DONE). */
        List<ScramRules.Result> results = List.of();

        Alteration(final ScramCredentials credentials, final List<ScramRules.Deletion> deletions, final List<ScramRules.Upsertion> upsertions,
            final Runnable waker)
        {
            super(Long.MAX_VALUE, waker); // no timeout field: Kafka's Admin gives up after its request.timeout.ms
            this.credentials = credentials;
            this.deletions = deletions;
            this.upsertions = upsertions;
        }

        @Override
        protected void run()
        {
            final var before = credentials.snapshot();
            final ScramRules.Outcome outcome = ScramRules.alter(before, deletions, upsertions);
            if (outcome.credentials() != before)
            {
                try
                {
                    credentials.replace(outcome.credentials());
                }
                catch (final ScramCredentials.NotDurableException ex)
                {
                    // memory and the file agree (the rename was made); only the durability of the change is in doubt
                    LOG.error("AlterUserScramCredentials: the change is in effect, but a crash may undo it ({})", ex.toString());
                    results = unchanged(outcome.results());
                    return;
                }
                catch (final IOException ex)
                {
                    // the path and the cause only: the file's content is never in the message
                    LOG.error("AlterUserScramCredentials: could not write the credentials ({}); nothing changed", ex.toString());
                    results = unchanged(outcome.results());
                    return;
                }
            }
            results = outcome.results();
        }

        @Override
        protected void failed(final Throwable cause)
        {
            LOG.error("AlterUserScramCredentials failed", cause);
            final List<ScramRules.Result> failed = new ArrayList<>();
            final Set<String> users = new LinkedHashSet<>();
            deletions.forEach(d -> users.add(d.name()));
            upsertions.forEach(u -> users.add(u.name()));
            users.forEach(user -> failed.add(new ScramRules.Result(user, Errors.UNKNOWN_SERVER_ERROR, null)));
            results = failed;
        }

        /**
         * The answers when the file could not be written, or written but not made durable: what would have been (or was)
         * done is UNKNOWN_SERVER_ERROR, as no durable success can be claimed.
         */
        private static List<ScramRules.Result> unchanged(final List<ScramRules.Result> results)
        {
            final List<ScramRules.Result> unchanged = new ArrayList<>();
            for (final ScramRules.Result r : results)
            {
                unchanged.add(r.errorCode() == Errors.NONE ? new ScramRules.Result(r.user(), Errors.UNKNOWN_SERVER_ERROR, null) : r);
            }
            return unchanged;
        }
    }
}
