# One transaction of a confluent-kafka producer on partition 0 of a topic, shared by transactions.py and
# dump_steps.py: begins, produces the values (flushed together, or each alone: one batch each), commits
# or aborts.
from confluent_kafka import KafkaException

TIMEOUT = 30


def transaction(producer, topic, values, commit, flush_each=False):
    producer.begin_transaction()
    for i, value in enumerate(values):
        producer.produce(topic, value.encode(), partition=0)
        if (flush_each or i == len(values) - 1) and producer.flush(TIMEOUT) != 0:
            raise KafkaException("records not delivered")
    if commit:
        producer.commit_transaction(TIMEOUT)
    else:
        producer.abort_transaction(TIMEOUT)
