package io.ferrite.client;

/**
 * Told the outcome of each record sent, on the thread running the producer's duty cycle, in send
 * order per partition. Nothing is allocated to call it: the record is named by the {@code tag} the
 * application gave {@link Producer#send}.
 */
@FunctionalInterface
public interface CompletionHandler
{
    /**
     * @param tag       the application's tag of the record
     * @param topic     the topic (the producer's interned name: compare with {@code ==} or {@code equals})
     * @param partition the partition
     * @param offset    the record's offset, or -1 when it failed or acks=0 gives none
     * @param errorCode 0, a Kafka error code ({@link ClientErrors}), or one of the client's own (1000 and up)
     */
    void onComplete(long tag, String topic, int partition, long offset, short errorCode);
}
