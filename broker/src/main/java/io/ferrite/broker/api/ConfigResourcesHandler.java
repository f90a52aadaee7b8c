package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ArrayDecoder;
import io.ferrite.wire.message.StructDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * What AlterConfigs and IncrementalAlterConfigs share: the request's resources and their configs
 * read into {@link ConfigChanges}' form, and one result per resource written in request order.
 * The checks, the errors and the changes are {@link ConfigChanges}'s; each API names its codecs'
 * fields once, in a {@link Request} and an {@link ArrayResponse}. An admin request (allocates):
 * checked on the network thread, applied by the admin agent.
 *
 * @param <T> the request's resource decoder
 * @param <C> the request's config decoder
 * @param <A> the response's result encoder
 */
abstract class ConfigResourcesHandler<T extends ArrayDecoder<T>, C extends ArrayDecoder<C>, A> implements RequestHandler
{
    private final ConfigChanges changes;
    private final boolean incremental;
    private final Request<?, T, C> request;
    private final ArrayResponse<?, A> response;
    private final Result<A> result;

    /** {@code incremental}: IncrementalAlterConfigs' meaning of the ops, else AlterConfigs' (see {@link ConfigChanges#apply}). */
    ConfigResourcesHandler(final ConfigChanges changes, final boolean incremental, final Request<?, T, C> request,
        final ArrayResponse<?, A> response, final Result<A> result)
    {
        this.changes = changes;
        this.incremental = incremental;
        this.request = request;
        this.response = response;
        this.result = result;
    }

    /**
     * An API's request decoder and where it keeps what is read: its resources and validateOnly flag,
     * each resource's type, name and configs, each config's name, operation and value.
     */
    record Request<R extends StructDecoder, T, C>(R decoder, Function<R, T> resources, Predicate<R> validateOnly,
        ToIntFunction<T> type, Function<T, String> name, Function<T, C> configs,
        Function<C, String> configName, ToIntFunction<C> operation, Function<C, String> value)
    {
        /** Wraps (walks and checks) the whole request; returns its resources. */
        T wrap(final DirectBuffer in, final int offset, final int limit, final short version)
        {
            decoder.wrap(in, offset, limit, version);
            return resources.apply(decoder);
        }

        boolean isValidateOnly()
        {
            return validateOnly.test(decoder);
        }
    }

    /** Writes the next of the response's results: a resource's outcome. */
    @FunctionalInterface
    interface Result<A>
    {
        void write(A results, short error, String message, byte type, String name);
    }

    @Override
    public final int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<ConfigChanges.Resource> resources = new ArrayList<>();
        for (final T r = request.wrap(in, offset, limit, version); r.hasNext(); )
        {
            r.next();
            final List<ConfigChanges.Op> ops = new ArrayList<>();
            for (final C c = request.configs().apply(r); c.hasNext(); )
            {
                c.next();
                ops.add(new ConfigChanges.Op(request.configName().apply(c), (byte)request.operation().applyAsInt(c),
                    request.value().apply(c)));
            }
            resources.add(new ConfigChanges.Resource((byte)request.type().applyAsInt(r), request.name().apply(r), ops));
        }
        // Kafka: a resource the principal may not ALTER_CONFIGS is refused (its own authorization error), the others changed
        final short[] refused = new short[resources.size()];
        final List<ConfigChanges.Resource> allowed = new ArrayList<>();
        for (int i = 0; i < resources.size(); i++)
        {
            refused[i] = Access.configResource(connection, AclCodes.ALTER_CONFIGS, resources.get(i).type(), resources.get(i).name());
            if (refused[i] == Errors.NONE)
            {
                allowed.add(resources.get(i));
            }
        }
        return changes.answer(allowed, incremental, request.isValidateOnly(), connection, out, outOffset,
            (o, at, outcomes) -> write(o, at, version, resources, merged(refused, outcomes)));
    }

    /** The outcomes of every resource, in request order: the refused ones' errors, the others' outcomes. */
    private static List<ConfigChanges.Outcome> merged(final short[] refused, final List<ConfigChanges.Outcome> outcomes)
    {
        final List<ConfigChanges.Outcome> all = new ArrayList<>(refused.length);
        int next = 0;
        for (final short error : refused)
        {
            // Kafka 4.4 says why for a topic ("Topic authorization failed."), nothing for the cluster
            all.add(error == Errors.NONE ? outcomes.get(next++) : new ConfigChanges.Outcome(error,
                error == Errors.TOPIC_AUTHORIZATION_FAILED ? Access.message(error) : null));
        }
        return all;
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version,
        final List<ConfigChanges.Resource> resources, final List<ConfigChanges.Outcome> outcomes)
    {
        final A results = response.start(out, outOffset, version, resources.size());
        for (int i = 0; i < resources.size(); i++)
        {
            final ConfigChanges.Outcome outcome = outcomes.get(i);
            result.write(results, outcome.error(), outcome.message(), resources.get(i).type(), resources.get(i).name());
        }
        return outOffset + response.finish();
    }
}
