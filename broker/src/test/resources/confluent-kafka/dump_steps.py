# DumpTransactionFilesTest: librdkafka's transactions (transaction version 1: it sends AddPartitionsToTxn
# itself) through confluent-kafka (Debian package python3-confluent-kafka) against the broker given as
# argument: transactional id and topic as arguments, one producer commits [a1, a2], aborts [b1], commits
# [c1] on partition 0, each record flushed alone (one batch each). Prints "done".
import sys

from confluent_kafka import Producer
from txn_steps import TIMEOUT, transaction

bootstrap, topic, transactional_id = sys.argv[1:4]

producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
producer.init_transactions(TIMEOUT)
for values, commit in ((["a1", "a2"], True), (["b1"], False), (["c1"], True)):
    transaction(producer, topic, values, commit, flush_each=True)
print("done")
