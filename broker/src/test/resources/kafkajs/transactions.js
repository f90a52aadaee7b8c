// KafkaJsTest: KafkaJS 2.x transactions (transaction version 1) against the broker given as argument.
// Commits [committed-1, committed-2], aborts [aborted-3], commits [committed-4]; then, in a transaction
// holding [zombie-5], a second producer of the same transactional id initialises (which aborts it):
// the first one's commit fails (prints {"zombieCommit": "<error type>"}) and the second commits
// [committed-6]; then a plain producer writes "end". A read_committed and a read_uncommitted consumer each read the partition from its start
// up to "end" (the last record: everything before it was either delivered or filtered out); prints one
// JSON line per consumer: {"readCommitted": [...]} and {"readUncommitted": [...]}.
'use strict'
const { Kafka, logLevel } = require('kafkajs')
const [bootstrap, topic] = process.argv.slice(2)
const kafka = new Kafka({ clientId: 'ferrite-kafkajs', brokers: [bootstrap], logLevel: logLevel.WARN })

async function transaction (producer, values, commit) {
  const txn = await producer.transaction()
  await txn.send({ topic, messages: values.map(value => ({ value, partition: 0 })) })
  if (commit) {
    await txn.commit()
  } else {
    await txn.abort()
  }
}

async function readToEnd (readUncommitted) {
  const consumer = kafka.consumer({ groupId: 'kafkajs-' + (readUncommitted ? 'uncommitted' : 'committed'), readUncommitted })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const values = []
  await new Promise((resolve, reject) => {
    consumer.run({
      eachMessage: async ({ message }) => {
        const value = message.value.toString()
        values.push(value)
        if (value === 'end') {
          resolve()
        }
      }
    }).catch(reject)
  })
  await consumer.disconnect()
  return values
}

async function main () {
  const producer = kafka.producer({ transactionalId: 'kafkajs-tx', idempotent: true, maxInFlightRequests: 1 })
  await producer.connect() // an idempotent producer id; the first transaction() sends the transactional InitProducerId
  await transaction(producer, ['committed-1', 'committed-2'], true)
  await transaction(producer, ['aborted-3'], false)
  await transaction(producer, ['committed-4'], true)

  const zombie = await producer.transaction()
  await zombie.send({ topic, messages: [{ value: 'zombie-5', partition: 0 }] })
  const successor = kafka.producer({ transactionalId: 'kafkajs-tx', idempotent: true, maxInFlightRequests: 1 })
  await successor.connect()
  const next = await successor.transaction() // fences the first producer: its transaction is aborted
  let fenced = 'none'
  try {
    await zombie.commit()
  } catch (e) {
    fenced = e.type || e.name
  }
  console.log(JSON.stringify({ zombieCommit: fenced }))
  await next.send({ topic, messages: [{ value: 'committed-6', partition: 0 }] })
  await next.commit()
  await successor.disconnect()
  await producer.disconnect()
  const plain = kafka.producer()
  await plain.connect()
  await plain.send({ topic, messages: [{ value: 'end', partition: 0 }] })
  await plain.disconnect()
  console.log(JSON.stringify({ readCommitted: await readToEnd(false) }))
  console.log(JSON.stringify({ readUncommitted: await readToEnd(true) }))
}

main().catch(e => {
  console.error(e)
  process.exit(1)
})
