#!/usr/bin/env bash
# A Kafka 4.4 single node configured as AclMatrixTest configures Ferrite, for -Dferrite.acl.kafka=127.0.0.1:PORT:
# StandardAuthorizer, a SASL_PLAINTEXT listener with PLAIN users admin, alice, bob, carol (password <user>-secret), the
# broker's own inter-broker login as admin, and super.users admin and User:ANONYMOUS (the controller's PLAINTEXT
# listener). Uses the class path /work/shared/kafka-ref/start.sh builds (run that once first).
# usage: kafka-acl-node.sh PORT DIR   (prints the pid; stop with kill <pid>; logs to DIR/kafka.log)
set -euo pipefail
port=${1:-19292}; dir=${2:-/tmp/kafka-acl-$port}; ctrl=$((port + 1))
cpf=${KAFKA_REF_CACHE:-$HOME/.cache/kafka-ref-4.4.0}/classpath.txt
[ -s "$cpf" ] || { echo "no $cpf: run /work/shared/kafka-ref/start.sh once, it builds the class path" >&2; exit 1; }
mkdir -p "$dir/data"
jaas='org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret" user_carol="carol-secret";'
cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=SASL_PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=SASL_PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=$jaas
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin;User:ANONYMOUS
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
PROPS
cp=$(cat "$cpf")
if [ ! -f "$dir/data/meta.properties" ]; then
  java -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid)" \
    -c "$dir/server.properties" >"$dir/format.log" 2>&1
fi
nohup java -Xms512m -Xmx512m -cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/kafka.log" 2>&1 &
pid=$!
echo $pid > "$dir/pid"
for i in $(seq 1 90); do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "$pid"; exit 0; fi
  sleep 1
done
echo "kafka did not open port $port; see $dir/kafka.log" >&2; exit 1
