#!/usr/bin/env bash
# make test: lint, typecheck, unit tests, integration tests against a broker of their own
# (port 19092 or the next free pair, state in .kafka-test) and the machine's Postgres and Redis, then
# the fault suite on brokers and a Postgres of its own. Stops what it started.
#   KAFKA_VERSION=4.1.1   the brokers of the run from the other supported line (default 3.9.1)
#   TEST_ONLY="integration faults"   only these stages (lint typecheck generated unit integration fuzz faults failover demo)
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

stage() { [ -z "${TEST_ONLY:-}" ] || [[ " $TEST_ONLY " == *" $1 "* ]]; }
echo "test: Kafka ${KAFKA_VERSION:-3.9.1}${TEST_ONLY:+, stages: $TEST_ONLY}"
if stage lint;      then echo "== lint";      npx --no-install eslint .; fi
if stage typecheck; then echo "== typecheck"; npx --no-install tsc -p tsconfig.json --noEmit; fi
if stage generated; then echo "== generated"; npx --no-install tsx scripts/gen-types.ts --check; fi   # types of schemas/ (npm run gen)
# Every test stage runs even when an earlier one failed, so one run reports every failure.
status=0
if stage unit;        then echo "== unit";        npm run -s test:unit 2>&1 | tee -a "$LOG" || status=1; fi
if stage integration; then echo "== integration"; npm run -s test:int 2>&1 | tee -a "$LOG" || status=1; fi
# Fuzz: the public apps on ports of their own, every operation of their API documents probed with hostile requests.
if stage fuzz;        then echo "== fuzz";        npm run -s test:fuzz 2>&1 | tee -a "$LOG" || status=1; fi
# Faults: a broker and a Postgres of the suite's own, stopped and killed.
if stage faults;      then echo "== faults";      npm run -s test:fault 2>&1 | tee -a "$LOG" || status=1; fi
# Broker failover: a three-node cluster of the suite's own, its partition leader killed under load.
if stage failover;    then echo "== failover";    npm run -s test:failover 2>&1 | tee -a "$LOG" || status=1; fi

# Demo: what a new user does first, `make up` then `make demo`, on the development ports. A stack
# that is already up is used as it is and left running; one started here is stopped again.
if stage demo; then
  echo "== demo"
  running_before=0
  for pidf in .run/pids/*.pid; do [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && running_before=1; done
  mkdir -p .run
  if scripts/dev/up.sh > .run/demo-up.log 2>&1; then
    npx --no-install tsx scripts/dev/demo.ts || { echo "demo: failed"; status=1; }
  else
    echo "demo: make up failed:"; tail -n 40 .run/demo-up.log; status=1
  fi
  [ "$running_before" = 1 ] || scripts/dev/down.sh >/dev/null 2>&1
fi

# grep finds nothing when nothing failed; that is not an error here.
passed=$( (grep -Eo '^ +[0-9]+ passing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
failed=$( (grep -Eo '^ +[0-9]+ failing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
# The failures again at the very end, where a log cut to its last lines still shows them.
if [ "$failed" != 0 ]; then
  echo "test: the failures:"
  grep -E -A 4 '^  [0-9]+\) ' "$LOG" | grep -Ev '^ +at ' | head -n 80
fi
echo "test: $passed passed, $failed failed"
exit "$status"
