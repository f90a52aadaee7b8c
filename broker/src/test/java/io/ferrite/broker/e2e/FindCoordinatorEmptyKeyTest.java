package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * FindCoordinator with an empty key, as a running Kafka 4.4 node answers it: NONE with the node's id,
 * host and port, for key type 0 (group) at v0-v6 and key type 1 (transaction) at v1-v6 (v0 has no key
 * type) — not INVALID_REQUEST.
 */
class FindCoordinatorEmptyKeyTest
{
    @TempDir
    Path dir;

    private static FindCoordinatorResponseData find(final RawClient raw, final short version, final byte keyType) throws Exception
    {
        final FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKeyType(keyType);
        if (version < 4)
        {
            request.setKey("");
        }
        else
        {
            request.setCoordinatorKeys(List.of(""));
        }
        return new FindCoordinatorResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.FIND_COORDINATOR, version, request)), version);
    }

    @Test
    void anEmptyGroupOrTransactionalIdIsThisNodes() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final int port = broker.broker.address().getPort();
            for (byte keyType = 0; keyType <= 1; keyType++)
            {
                for (short v = keyType; v <= 6; v++)
                {
                    final String what = "key type " + keyType + " v" + v;
                    final FindCoordinatorResponseData r = find(raw, v, keyType);
                    if (v < 4)
                    {
                        assertEquals(List.of(Errors.NONE, 1, "127.0.0.1", port), List.of(Errors.forCode(r.errorCode()), r.nodeId(), r.host(),
                            r.port()), what);
                    }
                    else
                    {
                        assertEquals(1, r.coordinators().size(), what);
                        final FindCoordinatorResponseData.Coordinator c = r.coordinators().get(0);
                        assertEquals(List.of("", Errors.NONE, 1, "127.0.0.1", port), List.of(c.key(), Errors.forCode(c.errorCode()),
                            c.nodeId(), c.host(), c.port()), what);
                    }
                }
            }
        }
    }
}
