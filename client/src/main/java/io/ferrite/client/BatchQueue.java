package io.ferrite.client;

/**
 * A FIFO of batches linked through {@link ProducerBatch#next}: a batch is in one queue at a time
 * (a partition's sealed batches, or the free pool), so queuing never allocates nor grows.
 */
final class BatchQueue
{
    private ProducerBatch head;
    private ProducerBatch tail;

    ProducerBatch peekFirst()
    {
        return head;
    }

    ProducerBatch pollFirst()
    {
        final ProducerBatch b = head;
        if (b != null)
        {
            head = b.next;
            if (head == null)
            {
                tail = null;
            }
            b.next = null;
        }
        return b;
    }

    void addFirst(final ProducerBatch b)
    {
        b.next = head;
        head = b;
        if (tail == null)
        {
            tail = b;
        }
    }

    /**
     * Puts a batch to be retried back in sequence order: after the batches with a lower sequence, before
     * those with a higher one or none yet (kafka-clients' {@code insertInSequenceOrder}), across the wrap after
     * Integer.MAX_VALUE ({@link Sequences#before}).
     */
    void insertBySequence(final ProducerBatch b)
    {
        ProducerBatch before = null;
        ProducerBatch at = head;
        while (at != null && at.hasSequence() && Sequences.before(at.baseSequence, b.baseSequence))
        {
            before = at;
            at = at.next;
        }
        if (before == null)
        {
            addFirst(b);
            return;
        }
        b.next = at;
        before.next = b;
        if (at == null)
        {
            tail = b;
        }
    }

    void addLast(final ProducerBatch b)
    {
        b.next = null;
        if (tail == null)
        {
            head = b;
        }
        else
        {
            tail.next = b;
        }
        tail = b;
    }
}
