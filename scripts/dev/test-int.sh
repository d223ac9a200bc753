#!/usr/bin/env bash
# make test-int: the integration and end-to-end suites (npm run test:int, or the files given as
# arguments) against a Kafka test broker. A broker named by TEST_KAFKA_BROKERS, or one already
# answering on 127.0.0.1:19092 (a `make test` of this checkout, say), is used as it is and left
# running; otherwise one is started on 19092 (state in .kafka-test/19092, as `make test` keeps it)
# and stopped at the end (TEST_KAFKA_PORT=N: port N and N + 1 instead). Postgres and Redis are
# the machine's (scripts/dev/services.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export KAFKAJS_NO_PARTITIONER_WARNING=1
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

scripts/dev/services.sh
started=0
if [ -z "${TEST_KAFKA_BROKERS:-}" ]; then
  port="${TEST_KAFKA_PORT:-19092}"
  export TEST_KAFKA_BROKERS="127.0.0.1:$port"
  if ! port_open "$port"; then
    broker_env=(KAFKA_STATE_DIR="$ROOT/.kafka-test/$port" KAFKA_PORT="$port" KAFKA_CONTROLLER_PORT="$((port + 1))")
    env "${broker_env[@]}" scripts/kafka/kafka.sh start
    started=1
    trap 'env "${broker_env[@]}" scripts/kafka/kafka.sh stop' EXIT
  fi
fi
echo "test-int: broker $TEST_KAFKA_BROKERS$([ "$started" = 1 ] && echo ' (started here, stopped at the end)')"
if [ "$#" -gt 0 ]; then
  npx --no-install mocha --config .mocharc.int.json "$@"
else
  npm run -s test:int
fi
