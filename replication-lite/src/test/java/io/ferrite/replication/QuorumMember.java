package io.ferrite.replication;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.ferrite.testing.ChildJvm;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * A child JVM of {@link MetadataQuorumFailoverTest}: one voter of a {@link MetadataQuorum} that, while it
 * leads, registers brokers, up to four appends in flight (each a fresh incarnation id), and prints each record the
 * quorum acknowledged ({@code ACKED}) and each record it applied ({@code COMMITTED}), one a line.
 * Args: {@code nodeId logDir voters}.
 */
public final class QuorumMember
{
    private static final int IN_FLIGHT = 4;

    private QuorumMember()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        ChildJvm.haltWithParent();
        final int nodeId = Integer.parseInt(args[0]);
        final QuorumSettings settings = QuorumSettings.from(Map.of(
            QuorumSettings.NODE_ID, args[0], "process.roles", "broker,controller", "controller.quorum.voters", args[2],
            QuorumSettings.CLUSTER_ID, "RmVycml0ZVRlc3QwMDAwMQ"));
        final MetadataQuorum quorum = MetadataQuorum.start(settings, Path.of(args[1]), new MetadataQuorum.Listener()
        {
            @Override
            public void onCommitted(final long offset, final ApiMessageAndVersion record)
            {
                print("COMMITTED", offset, record);
            }

            @Override
            public void onLeaderChange(final OptionalInt leaderId, final int epoch)
            {
                System.out.println("LEADER node=" + nodeId + " leader=" + leaderId.orElse(-1) + " epoch=" + epoch);
            }
        });
        // several appends in flight, so that an acknowledgement given before the commit has a chance to show
        final Semaphore inFlight = new Semaphore(IN_FLIGHT);
        while (true)
        {
            if (quorum.isLeader() && inFlight.tryAcquire())
            {
                final RegisterBrokerRecord registration = new RegisterBrokerRecord()
                    .setBrokerId(nodeId).setBrokerEpoch(quorum.epoch()).setIncarnationId(Uuid.randomUuid());
                final ApiMessageAndVersion record = new ApiMessageAndVersion(registration, (short)0);
                quorum.append(List.of(record)).whenComplete((offset, failure) ->
                {
                    inFlight.release();
                    if (failure == null)
                    {
                        print("ACKED", offset, record);
                    }
                    else
                    {
                        System.out.println("NOT_ACKED node=" + nodeId + " " + failure);
                    }
                });
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the pace of the load, not a wait for a state
        }
    }

    private static synchronized void print(final String what, final long offset, final ApiMessageAndVersion record)
    {
        if (record.message() instanceof RegisterBrokerRecord registration)
        {
            System.out.println(what + " offset=" + offset + " incarnation=" + registration.incarnationId() +
                " broker=" + registration.brokerId() + " epoch=" + registration.brokerEpoch());
        }
    }
}
