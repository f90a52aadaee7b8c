# ConfluentKafkaTest: librdkafka's transactions (transaction version 1) through confluent-kafka (Debian
# package python3-confluent-kafka) against the broker given as argument. Commits [committed-1,
# committed-2], aborts [aborted-3] (flushed first, so that its record is in the log), commits
# [committed-4]; then, in a transaction holding [zombie-5], a second producer of the same transactional
# id initialises (which aborts it): the first one's commit fails (prints {"zombieCommit": "<error name>"})
# and the second commits [committed-6]; then a plain producer writes "end". A read_committed and a read_uncommitted consumer
# each read the partition from its start up to "end" (the last record: everything before it was either
# delivered or filtered out); prints one JSON line per consumer: {"readCommitted": [...]} and
# {"readUncommitted": [...]}.
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from txn_steps import TIMEOUT, transaction

bootstrap, topic = sys.argv[1:3]


def read_to_end(isolation):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "confluent-" + isolation,
                         "isolation.level": isolation, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values = []
    deadline = time.monotonic() + TIMEOUT
    while "end" not in values:
        if time.monotonic() > deadline:
            raise TimeoutError("read with %s: %s" % (isolation, values))
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            raise KafkaException(message.error())
        values.append(message.value().decode())
    consumer.close()
    return values


producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "confluent-tx"})
producer.init_transactions(TIMEOUT)
transaction(producer, topic, ["committed-1", "committed-2"], True)
transaction(producer, topic, ["aborted-3"], False)
transaction(producer, topic, ["committed-4"], True)

producer.begin_transaction()
producer.produce(topic, b"zombie-5", partition=0)
if producer.flush(TIMEOUT) != 0:
    raise KafkaException("zombie-5 not delivered")
successor = Producer({"bootstrap.servers": bootstrap, "transactional.id": "confluent-tx"})
successor.init_transactions(TIMEOUT)  # fences the first producer: its transaction is aborted
fenced = "none"
try:
    producer.commit_transaction(TIMEOUT)
except KafkaException as e:
    fenced = e.args[0].name()
print(json.dumps({"zombieCommit": fenced}))
transaction(successor, topic, ["committed-6"], True)
plain = Producer({"bootstrap.servers": bootstrap})
plain.produce(topic, b"end", partition=0)
if plain.flush(TIMEOUT) != 0:
    raise KafkaException("end not delivered")
print(json.dumps({"readCommitted": read_to_end("read_committed")}))
print(json.dumps({"readUncommitted": read_to_end("read_uncommitted")}))
