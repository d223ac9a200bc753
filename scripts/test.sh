#!/usr/bin/env bash
# make test: lint, typecheck, unit tests, then integration tests against a broker of their own
# (port 19092, state in .kafka-test) and the machine's Postgres and Redis. Stops what it started.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export KAFKAJS_NO_PARTITIONER_WARNING=1
TEST_KAFKA_PORT="${TEST_KAFKA_PORT:-19092}"
export TEST_KAFKA_BROKERS="127.0.0.1:$TEST_KAFKA_PORT"
broker_env=(KAFKA_STATE_DIR="$ROOT/.kafka-test" KAFKA_PORT="$TEST_KAFKA_PORT" KAFKA_CONTROLLER_PORT="$((TEST_KAFKA_PORT + 1))")
LOG="$(mktemp)"

scripts/dev/services.sh
env "${broker_env[@]}" scripts/kafka/kafka.sh start
trap 'env "${broker_env[@]}" scripts/kafka/kafka.sh stop; rm -f "$LOG"' EXIT

echo "== lint";       npx --no-install eslint .
echo "== typecheck";  npx --no-install tsc -p tsconfig.json --noEmit
echo "== unit";       npm run -s test:unit 2>&1 | tee -a "$LOG"
echo "== integration"; npm run -s test:int 2>&1 | tee -a "$LOG"

# grep finds nothing when nothing failed; that is not an error here.
passed=$( (grep -Eo '^ +[0-9]+ passing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
failed=$( (grep -Eo '^ +[0-9]+ failing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
echo "test: $passed passed, $failed failed"
