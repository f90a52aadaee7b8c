package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A single node answers CreateTopics once its record in the creation journal is durable and makes the partitions'
 * files right after (issue 11), as a Kafka broker makes a topic's logs after its controller answered: a test that
 * looks at the files, or counts the fsyncs of what comes next, first waits for the topics to be published — until
 * the broker describes them, the observable condition a client has.
 */
final class TopicsPublished
{
    private TopicsPublished()
    {
    }

    static void await(final Admin admin, final String... topics)
    {
        Await.await(() ->
        {
            try
            {
                admin.describeTopics(List.of(topics)).allTopicNames().get(20, TimeUnit.SECONDS);
                return true;
            }
            catch (final ExecutionException ex)
            {
                if (ex.getCause() instanceof UnknownTopicOrPartitionException)
                {
                    return false;
                }
                throw ex;
            }
        }, Duration.ofSeconds(30), () -> List.of(topics) + " published, their files made");
    }
}
