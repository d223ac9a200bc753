#!/usr/bin/env bash
# make test: lint, typecheck, unit tests, integration tests against a broker of their own
# (port 19092 or the next free pair, state in .kafka-test) and the machine's Postgres and Redis, then
# the fault suite on brokers and a Postgres of its own. Stops what it started.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export KAFKAJS_NO_PARTITIONER_WARNING=1
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# 19092 unless something else holds it (a broker of another checkout, say): then the next free pair.
if [ -z "${TEST_KAFKA_PORT:-}" ]; then
  for p in 19092 19192 19292 19392 19492 19592; do
    if ! port_open "$p" && ! port_open "$((p + 1))"; then TEST_KAFKA_PORT="$p"; break; fi
  done
  [ -n "${TEST_KAFKA_PORT:-}" ] || { echo "test: no free port pair for the test broker" >&2; exit 1; }
fi
export TEST_KAFKA_BROKERS="127.0.0.1:$TEST_KAFKA_PORT"
broker_env=(KAFKA_STATE_DIR="$ROOT/.kafka-test" KAFKA_PORT="$TEST_KAFKA_PORT" KAFKA_CONTROLLER_PORT="$((TEST_KAFKA_PORT + 1))")
LOG="$(mktemp)"

scripts/dev/services.sh
scripts/dev/system-deps.sh
env "${broker_env[@]}" scripts/kafka/kafka.sh start
trap 'env "${broker_env[@]}" scripts/kafka/kafka.sh stop; rm -f "$LOG"' EXIT

echo "== lint";       npx --no-install eslint .
echo "== typecheck";  npx --no-install tsc -p tsconfig.json --noEmit
echo "== generated";  npx --no-install tsx scripts/gen-types.ts --check   # types of schemas/ (npm run gen)
# Every stage runs even when an earlier one failed, so one run reports every failure.
status=0
echo "== unit";       npm run -s test:unit 2>&1 | tee -a "$LOG" || status=1
echo "== integration"; npm run -s test:int 2>&1 | tee -a "$LOG" || status=1
# Faults: a broker and a Postgres of the suite's own, stopped and killed.
echo "== faults";     npm run -s test:fault 2>&1 | tee -a "$LOG" || status=1

# grep finds nothing when nothing failed; that is not an error here.
passed=$( (grep -Eo '^ +[0-9]+ passing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
failed=$( (grep -Eo '^ +[0-9]+ failing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
echo "test: $passed passed, $failed failed"
exit "$status"
