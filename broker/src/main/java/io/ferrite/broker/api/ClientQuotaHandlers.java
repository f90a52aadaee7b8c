package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.admin.AdminCommand;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.quota.ClientQuotas;
import io.ferrite.broker.quota.QuotaEntity;
import io.ferrite.broker.quota.QuotaRules;
import io.ferrite.wire.message.AlterClientQuotasRequestDecoder;
import io.ferrite.wire.message.AlterClientQuotasResponseEncoder;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeClientQuotasRequestDecoder;
import io.ferrite.wire.message.DescribeClientQuotasResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * DescribeClientQuotas and AlterClientQuotas ({@code Admin.describeClientQuotas} and {@code alterClientQuotas},
 * {@code kafka-configs.sh --entity-type users|clients|ips}), answered as Kafka 4.4 answers them ({@link QuotaRules}).
 * Describe reads the published quotas on the network thread; an alteration runs on the admin agent, one after another,
 * which checks it against the quotas as they are then, writes the quotas' file durably and publishes them before the
 * answer goes out — from then on every connection's next produce or fetch is measured against them.
 *
 * <p>Who may call them: Kafka checks DESCRIBE_CONFIGS, and ALTER_CONFIGS, on the cluster; without an authorizer every
 * caller may. Single node only: a cluster's quotas belong in its metadata log, so a cluster node does not advertise them.
 */
public final class ClientQuotaHandlers
{
    private static final Logger LOG = LoggerFactory.getLogger(ClientQuotaHandlers.class);

    private ClientQuotaHandlers()
    {
    }

    /** Registers both APIs (advertised by ApiVersions from then on); {@code waker} wakes the network thread of {@code apis}. */
    public static void register(final Apis apis, final ClientQuotas quotas, final AdminAgent admin, final Runnable waker)
    {
        apis.registerLazily(ApiKeys.DESCRIBE_CLIENT_QUOTAS, () -> new Describe(quotas))
            .registerLazily(ApiKeys.ALTER_CLIENT_QUOTAS, () -> new Alter(quotas, admin, waker));
    }

    private static final class Describe implements RequestHandler
    {
        private final ClientQuotas quotas;
        private final DescribeClientQuotasRequestDecoder request = new DescribeClientQuotasRequestDecoder();
        private final DescribeClientQuotasResponseEncoder response = new DescribeClientQuotasResponseEncoder();

        Describe(final ClientQuotas quotas)
        {
            this.quotas = quotas;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final List<QuotaRules.Component> components = new ArrayList<>();
            final DescribeClientQuotasRequestDecoder.ComponentData c = request.components();
            while (c.hasNext())
            {
                c.next();
                components.add(new QuotaRules.Component(c.entityType(), c.matchType(), c.match()));
            }
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            if (!Access.cluster(connection, AclCodes.DESCRIBE_CONFIGS)) // Kafka: DESCRIBE_CONFIGS on the cluster
            {
                // Kafka's getErrorResponse of the error's own exception: no message (ApiError drops a default one)
                response.errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).errorMessage(null).entriesNull();
                return outOffset + response.finish();
            }
            final Map<QuotaEntity, Map<String, Double>> matched;
            try
            {
                matched = QuotaRules.describe(quotas.quotas(), components, request.strict());
            }
            catch (final QuotaRules.Refused refused) // the whole request's error, no entries (Kafka's getErrorResponse)
            {
                response.errorCode(refused.errorCode).errorMessage(refused.getMessage()).entriesNull();
                return outOffset + response.finish();
            }
            final DescribeClientQuotasResponseEncoder.EntryData entry = response.errorCode(Errors.NONE).errorMessage(null)
                .entries(matched.size());
            matched.forEach((entity, values) ->
            {
                entry.next();
                final Map<String, String> parts = entity.entries();
                final DescribeClientQuotasResponseEncoder.EntityData e = entry.entity(parts.size());
                parts.forEach((type, name) -> e.next().entityType(type).entityName(name));
                final DescribeClientQuotasResponseEncoder.ValueData v = entry.values(values.size());
                values.forEach((key, value) -> v.next().key(key).value(value));
            });
            return outOffset + response.finish();
        }
    }

    private static final class Alter implements RequestHandler
    {
        private final ClientQuotas quotas;
        private final AdminAgent admin;
        private final Runnable waker;
        private final AlterClientQuotasRequestDecoder request = new AlterClientQuotasRequestDecoder();
        private final AlterClientQuotasResponseEncoder response = new AlterClientQuotasResponseEncoder();

        Alter(final ClientQuotas quotas, final AdminAgent admin, final Runnable waker)
        {
            this.quotas = quotas;
            this.admin = admin;
            this.waker = waker;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final List<QuotaRules.Alteration> alterations = new ArrayList<>();
            final AlterClientQuotasRequestDecoder.EntryData e = request.entries();
            while (e.hasNext())
            {
                e.next();
                // Kafka reads an entity into a map: a type given twice is the later one's
                final Map<String, String> entity = new HashMap<>();
                final AlterClientQuotasRequestDecoder.EntityData parts = e.entity();
                while (parts.hasNext())
                {
                    parts.next();
                    entity.put(parts.entityType(), parts.entityName());
                }
                final List<QuotaRules.Op> ops = new ArrayList<>();
                final AlterClientQuotasRequestDecoder.OpData o = e.ops();
                while (o.hasNext())
                {
                    o.next();
                    ops.add(new QuotaRules.Op(o.key(), o.value(), o.remove()));
                }
                alterations.add(new QuotaRules.Alteration(entity, ops));
            }
            if (!Access.cluster(connection, AclCodes.ALTER_CONFIGS)) // Kafka: ALTER_CONFIGS on the cluster, else each entity the error
            {
                final List<QuotaRules.Result> refused = new ArrayList<>();
                final String message = Access.clusterRefusal(connection, AclCodes.ALTER_CONFIGS); // Kafka's controller's text
                alterations.forEach(a -> refused.add(new QuotaRules.Result(a.entity(), Errors.CLUSTER_AUTHORIZATION_FAILED, message)));
                return write(out, outOffset, version, refused);
            }
            final Alteration alteration = new Alteration(quotas, alterations, request.validateOnly(), waker);
            return AdminAnswer.submit(admin, alteration, (o, at, timedOut) -> write(o, at, version, timedOut ?
                alteration.answers(Errors.REQUEST_TIMED_OUT) : alteration.results), connection);
        }

        private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<QuotaRules.Result> results)
        {
            final AlterClientQuotasResponseEncoder.EntryData entry = response.wrap(out, outOffset, version).throttleTimeMs(0)
                .entries(results.size());
            for (final QuotaRules.Result r : results)
            {
                entry.next().errorCode(r.errorCode()).errorMessage(r.errorMessage());
                final AlterClientQuotasResponseEncoder.EntityData parts = entry.entity(r.entity().size());
                r.entity().forEach((type, name) -> parts.next().entityType(type).entityName(name));
            }
            return outOffset + response.finish();
        }
    }

    /** An alteration on the admin agent: checked against the quotas then, written, published. */
    private static final class Alteration extends AdminCommand
    {
        private final ClientQuotas quotas;
        private final List<QuotaRules.Alteration> alterations;
        private final boolean validateOnly;
        /** The answers (published by the command's release of DONE). */
        List<QuotaRules.Result> results = List.of();

        Alteration(final ClientQuotas quotas, final List<QuotaRules.Alteration> alterations, final boolean validateOnly,
            final Runnable waker)
        {
            super(Long.MAX_VALUE, waker); // no timeout field: Kafka's Admin gives up after its request.timeout.ms
            this.quotas = quotas;
            this.alterations = alterations;
            this.validateOnly = validateOnly;
        }

        @Override
        protected void run()
        {
            final Map<QuotaEntity, Map<String, Double>> before = quotas.quotas();
            final QuotaRules.Outcome outcome = QuotaRules.alter(before, alterations, validateOnly);
            if (outcome.quotas() != before)
            {
                try
                {
                    quotas.replace(outcome.quotas());
                }
                catch (final IOException ex)
                {
                    // not made durable (or not written at all): no success can be claimed
                    LOG.error("AlterClientQuotas: could not write the client quotas durably ({})", ex.toString());
                    results = answers(Errors.UNKNOWN_SERVER_ERROR);
                    return;
                }
            }
            results = outcome.results();
        }

        @Override
        protected void failed(final Throwable cause)
        {
            LOG.error("AlterClientQuotas failed", cause);
            results = answers(Errors.UNKNOWN_SERVER_ERROR);
        }

        /** Every entity of the request answered {@code error} (once each, as Kafka's map of results has it). */
        List<QuotaRules.Result> answers(final short error)
        {
            final Map<Map<String, String>, QuotaRules.Result> byEntity = new java.util.LinkedHashMap<>();
            alterations.forEach(a -> byEntity.put(a.entity(), new QuotaRules.Result(a.entity(), error, null)));
            return new ArrayList<>(byEntity.values());
        }
    }
}
