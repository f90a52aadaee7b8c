package io.ferrite.broker.quota;

import io.ferrite.broker.net.Connection;

import java.nio.charset.StandardCharsets;

/**
 * A connection's quotas as last resolved: the rates its produce and fetch requests record into and their bounds (a
 * null rate: no quota applies). Valid while the quotas' snapshot, the connection's principal and the request's client
 * id are those it was made for — compared without allocating, so a client that keeps its client id (kafka-clients
 * does) resolves once. Network thread only.
 */
final class ConnectionQuota
{
    private final ClientQuotas.Snapshot snapshot;
    private final String principal;
    /** The client id's UTF-8 bytes, null for a null client id. */
    private final byte[] clientId;
    ByteRate produceRate;
    double produceBound;
    ByteRate fetchRate;
    double fetchBound;

    ConnectionQuota(final ClientQuotas.Snapshot snapshot, final Connection connection)
    {
        this.snapshot = snapshot;
        this.principal = connection.principal();
        final int length = connection.clientIdLength();
        if (length < 0)
        {
            this.clientId = null;
        }
        else
        {
            this.clientId = new byte[length];
            connection.in.getBytes(connection.clientIdOffset(), clientId);
        }
    }

    /** The client id as Kafka's quotas read it (a null one as ""). */
    String clientId()
    {
        return clientId == null ? "" : new String(clientId, StandardCharsets.UTF_8);
    }

    boolean matches(final ClientQuotas.Snapshot now, final Connection connection)
    {
        if (now != snapshot || connection.principal() != principal || retired(produceRate) || retired(fetchRate))
        {
            return false;
        }
        final int length = connection.clientIdLength();
        if (length < 0 || clientId == null)
        {
            return length < 0 && clientId == null;
        }
        if (length != clientId.length)
        {
            return false;
        }
        final int offset = connection.clientIdOffset();
        for (int i = 0; i < length; i++)
        {
            if (connection.in.getByte(offset + i) != clientId[i])
            {
                return false;
            }
        }
        return true;
    }

    private static boolean retired(final ByteRate rate)
    {
        return rate != null && rate.retired;
    }
}
