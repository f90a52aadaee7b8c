package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code kafka-features.sh describe} (FeatureCommand, in a child JVM) and Admin {@code describeFeatures()}: the
 * features Ferrite advertises (broker README: transaction.version 0-2 finalized at 2, Kafka's other features but
 * metadata.version supported 0-0 and not finalized), printed in the shape a Kafka 4.4 node prints its own (taken from
 * one: a feature at level 0 is shown "FinalizedVersionLevel: 0").
 */
class FeaturesToolTest
{
    /** The transaction.version line a Kafka 4.4 node printed (its features' epoch was 39), as it was. */
    private static final String KAFKAS_TRANSACTION_VERSION_LINE = "Feature: transaction.version                       "
        + "SupportedMinVersion: 0                SupportedMaxVersion: 2                FinalizedVersionLevel: 2                Epoch: 39";

    @TempDir
    Path dir;

    @Test
    void describeFeaturesTellsWhatFerriteImplements() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            final FeatureMetadata features = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
            final Map<String, SupportedVersionRange> zeroToZero = new TreeMap<>();
            for (final String name : List.of("eligible.leader.replicas.version", "group.version", "kraft.version", "share.version",
                "streams.version"))
            {
                zeroToZero.put(name, new SupportedVersionRange((short)0, (short)0));
            }
            final Map<String, SupportedVersionRange> supported = new TreeMap<>(zeroToZero);
            supported.put("transaction.version", new SupportedVersionRange((short)0, (short)2));
            assertEquals(supported, new TreeMap<>(features.supportedFeatures()));
            assertEquals(Map.of("transaction.version", new FinalizedVersionRange((short)2, (short)2)), features.finalizedFeatures());
            assertEquals(Optional.of(0L), features.finalizedFeaturesEpoch());
        }
    }

    @Test
    void featureCommandDescribePrintsKafkasShape() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final KafkaTool.Run run = KafkaTool.run(90, null, "org.apache.kafka.tools.FeatureCommand",
                "--bootstrap-server", broker.bootstrap(), "describe");
            assertEquals(0, run.status(), run.toString());
            assertEquals(List.of(
                line("eligible.leader.replicas.version", 0, 0, 0),
                line("group.version", 0, 0, 0),
                line("kraft.version", 0, 0, 0),
                line("share.version", 0, 0, 0),
                line("streams.version", 0, 0, 0),
                line("transaction.version", 2, 2, 0)), run.lines(), run.toString());
            // Kafka's own line, but for the epoch (Ferrite's features never change: epoch 0)
            assertEquals(KAFKAS_TRANSACTION_VERSION_LINE.replace("Epoch: 39", "Epoch: 0"), run.lines().get(5), run.toString());
        }
    }

    /** A line as Kafka 4.4's FeatureCommand prints it, for a feature with minimum 0. */
    private static String line(final String feature, final int max, final int finalized, final long epoch)
    {
        return String.format("Feature: %-41s SupportedMinVersion: %-16s SupportedMaxVersion: %-16s FinalizedVersionLevel: %-16s Epoch: %d",
            feature, 0, max, finalized, epoch);
    }
}
