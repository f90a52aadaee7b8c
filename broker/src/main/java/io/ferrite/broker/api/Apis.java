package io.ferrite.broker.api;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The broker's APIs: one handler per API key. An API without a handler is not advertised by
 * ApiVersions, and a request for it closes the connection, as Kafka does for an API it lacks.
 */
public final class Apis implements RequestHandler
{
    private final RequestHandler[] handlers = new RequestHandler[maxId() + 1];
    /** Handlers still to be made, on the first request for their API. */
    private final Supplier<?>[] factories = new Supplier<?>[handlers.length];
    private final ApiVersionsHandler apiVersions = new ApiVersionsHandler(this);
    /** The {@code transaction.version} level ApiVersions finalizes, or -1 for no features (a broker without transactions). */
    private short transactionVersion = -1;

    public Apis()
    {
        register(ApiKeys.API_VERSIONS, apiVersions);
    }

    private static int maxId()
    {
        int max = 0;
        for (final ApiKeys api : ApiKeys.values())
        {
            max = Math.max(max, api.id);
        }
        return max;
    }

    public Apis register(final ApiKeys api, final RequestHandler handler)
    {
        handlers[api.id] = handler;
        factories[api.id] = null;
        return this;
    }

    /**
     * Registers a handler made by {@code factory} on the first request for {@code api} (on the
     * thread calling {@link #handle}: one Apis serves one network thread): the handler's codec
     * classes are loaded only for the APIs clients use, not all of them at start-up.
     */
    public Apis registerLazily(final ApiKeys api, final Supplier<? extends RequestHandler> factory)
    {
        handlers[api.id] = null;
        factories[api.id] = factory;
        return this;
    }

    /**
     * What handles {@code api} now, made on the supplier's first call when registered lazily (to wrap it: a handler
     * that hands some of its requests to it); its supplier gives null for an API without a handler. Call it once.
     */
    public Supplier<RequestHandler> current(final ApiKeys api)
    {
        final RequestHandler handler = handlers[api.id];
        final Supplier<?> factory = factories[api.id];
        return () -> handler != null ? handler : factory == null ? null : (RequestHandler)factory.get();
    }

    /**
     * The cluster's finalized {@code transaction.version} (the coordinator's, {@code TxnConfig}): the
     * one feature ApiVersions advertises — clients at level 2 speak transaction version 2 (KIP-890).
     */
    public Apis transactionVersion(final short level)
    {
        this.transactionVersion = level;
        return this;
    }

    short transactionVersion()
    {
        return transactionVersion;
    }

    /** The APIs this broker answers, in key order. */
    public List<ApiKeys> supported()
    {
        final List<ApiKeys> list = new ArrayList<>();
        for (final ApiKeys api : ApiKeys.values())
        {
            if (handlers[api.id] != null || factories[api.id] != null)
            {
                list.add(api);
            }
        }
        list.sort((a, b) -> Short.compare(a.id, b.id));
        return list;
    }

    /** The highest version advertised: an unstable latest version is not. */
    static short advertisedMax(final ApiKeys api)
    {
        return api.latestVersionUnstable ? (short)(api.highestVersion - 1) : api.highestVersion;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        RequestHandler handler = handlers[api.id];
        if (handler == null && factories[api.id] != null)
        {
            handler = (RequestHandler)factories[api.id].get();
            handlers[api.id] = handler;
            factories[api.id] = null;
        }
        if (handler == null || (version > advertisedMax(api) && api != ApiKeys.API_VERSIONS))
        {
            return CLOSE;
        }
        return handler.handle(api, version, in, offset, limit, out, outOffset, connection);
    }
}
