package io.ferrite.broker.cluster;

import io.ferrite.broker.FerriteServer;
import io.ferrite.testing.ChildJvm;

/** A child JVM of {@link ClusterModeTest}: {@code ferrite-server} with its arguments, halted when the test JVM goes. */
public final class ClusterBrokerMain
{
    private ClusterBrokerMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        ChildJvm.haltWithParent();
        FerriteServer.main(args);
    }
}
