#!/usr/bin/env bash
# make test: lint, typecheck, the generated types and the build side by side; unit tests and the
# integration suites that need no broker while the test broker starts (port 19092 or the next free
# pair, state in .kafka-test/<port>); the integration and fuzz suites against that broker and the
# machine's Postgres and Redis, and beside them two jobs: the fault suites (a broker, a Postgres and
# a Redis of their own), and the failover suite (a cluster of its own) then the demo (a stack of
# its own). Stops what it started.
#   KAFKA_VERSION=4.1.1   the brokers of the run from the other supported line (default 3.9.1)
#   TEST_ONLY="integration faults"   only these stages (lint typecheck generated unit standalone
#                         integration fuzz faults failover demo); `standalone` is the integration
#                         suites that talk to no broker, `integration` the ones that do
#   TEST_BROKER_SUITES="test/integration/a.int.test.ts …"   the integration stage runs these suites
#                         instead of every one that talks to the broker
#   TEST_JOBS=2           integration test files run at a time (mocha --parallel); 1 runs them in turn
#   CHAINPIPE_BUILT=1     dist/ already holds the build of this tree (a run before this one made it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export KAFKAJS_NO_PARTITIONER_WARNING=1
JOBS="${TEST_JOBS:-2}"
stage() { [ -z "${TEST_ONLY:-}" ] || [[ " $TEST_ONLY " == *" $1 "* ]]; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# 19092 unless something else holds it (a broker of another checkout, say): then the next free pair.
if [ -z "${TEST_KAFKA_PORT:-}" ]; then
  for p in 19092 19192 19292 19392 19492 19592; do
    if ! port_open "$p" && ! port_open "$((p + 1))"; then TEST_KAFKA_PORT="$p"; break; fi
  done
  [ -n "${TEST_KAFKA_PORT:-}" ] || { echo "test: no free port pair for the test broker" >&2; exit 1; }
fi
export TEST_KAFKA_BROKERS="127.0.0.1:$TEST_KAFKA_PORT"
# A state folder per port: two runs of this checkout (both Kafka lines, say) never share one.
broker_env=(KAFKA_STATE_DIR="$ROOT/.kafka-test/$TEST_KAFKA_PORT" KAFKA_PORT="$TEST_KAFKA_PORT" KAFKA_CONTROLLER_PORT="$((TEST_KAFKA_PORT + 1))")
LOG="$(mktemp)"
OUT="$(mktemp -d)"

# Suites say by their file name what they need. Unit tests (`*.test.ts` beside each lib and app)
# open no socket (test/unit/no-sockets.ts refuses one); those that serve or call one on loopback
# are `*.loopback.test.ts`. Those and the integration suites `*.standalone.int.test.ts` talk to
# no broker, neither themselves nor through an app they start: they run in the standalone stage
# with TEST_KAFKA_BROKERS=none (every Kafka client refused), so one that starts to need a broker
# fails rather than slip by; every other suite of test/integration and test/e2e needs one.
shopt -s globstar nullglob
STANDALONE_SUITES=(test/integration/**/*.standalone.int.test.ts libs/*/test/**/*.loopback.test.ts apps/*/test/**/*.loopback.test.ts)
BROKER_SUITES=()
for f in test/integration/**/*.int.test.ts test/e2e/**/*.e2e.test.ts; do
  [[ "$f" == *.standalone.int.test.ts ]] || BROKER_SUITES+=("$f")
done
if [ -n "${TEST_BROKER_SUITES:-}" ]; then read -ra BROKER_SUITES <<< "$TEST_BROKER_SUITES"; fi
for f in "${BROKER_SUITES[@]}"; do [ -f "$f" ] || { echo "test: $f of TEST_BROKER_SUITES does not exist" >&2; exit 1; }; done

scripts/dev/services.sh
scripts/dev/system-deps.sh

# The broker starts in the background while the checks and the broker-free tests run.
broker_pid=""
broker_started=0
stop_broker() {
  if [ -n "$broker_pid" ]; then wait "$broker_pid" 2>/dev/null || true; fi
  [ "$broker_started" = 0 ] || env "${broker_env[@]}" scripts/kafka/kafka.sh stop
}
trap 'stop_broker; rm -rf "$LOG" "$OUT"' EXIT
if stage integration || stage fuzz; then
  broker_started=1
  env "${broker_env[@]}" scripts/kafka/kafka.sh start > "$OUT/broker.out" 2>&1 &
  broker_pid=$!
fi

# run_bg NAME COMMAND...: runs the command in the background, its output kept for `finish NAME`.
declare -A bg_pids=() bg_started=()
run_bg() { local name="$1"; shift; bg_started[$name]=$SECONDS; "$@" > "$OUT/$name.out" 2>&1 & bg_pids[$name]=$!; }
# finish NAME [log]: waits for the job and prints its output whole under its heading (also into
# the test log with `log`); returns the job's exit status.
finish() {
  local rc=0
  wait "${bg_pids[$1]}" || rc=$?
  echo "== $1 (done $((SECONDS - bg_started[$1])) s after its start)"
  cat "$OUT/$1.out"
  [ "${2:-}" != log ] || cat "$OUT/$1.out" >> "$LOG"
  return "$rc"
}

echo "test: Kafka ${KAFKA_VERSION:-3.9.1}${TEST_ONLY:+, stages: $TEST_ONLY}"
# The checks side by side, and the build once for every stage that runs compiled code (the
# compiled-build suite and the demo's `make up`). A failed check stops the run here.
stage lint && run_bg lint npx --no-install eslint .
stage typecheck && run_bg typecheck npx --no-install tsc -p tsconfig.json --noEmit
stage generated && run_bg generated npx --no-install tsx scripts/gen-types.ts --check   # types of schemas/, docs/asyncapi.json, docs/configuration.md (npm run gen)
if [ "${CHAINPIPE_BUILT:-0}" != 1 ] && { stage integration || stage demo; }; then run_bg build npm run -s build; fi
checks_ok=1
for name in lint typecheck generated build; do
  [ -n "${bg_pids[$name]:-}" ] || continue
  finish "$name" || { echo "test: $name failed"; checks_ok=0; }
done
[ "$checks_ok" = 1 ] || exit 1
[ -z "${bg_pids[build]:-}" ] || export CHAINPIPE_BUILT=1

# Every test stage runs even when an earlier one failed, so one run reports every failure.
status=0
# Unit tests and the broker-free suites side by side, while the broker starts.
stage unit && run_bg unit npm run -s test:unit
stage standalone && run_bg standalone env TEST_KAFKA_BROKERS=none npx --no-install mocha --config .mocharc.int.json --parallel --jobs "$JOBS" "${STANDALONE_SUITES[@]}"
for name in unit standalone; do
  [ -n "${bg_pids[$name]:-}" ] || continue
  finish "$name" log || status=1
done
# Faults, failover and the demo bring brokers, a Postgres or a whole stack of their own, and mostly
# wait on them (outages held for tens of seconds, minutes waited for to close): they run beside
# the integration and fuzz stages instead of after them, as two background jobs (the faults; the
# failover then the demo), each one's output shown whole at the end. In one job they took longer
# than the integration stage and were the run's last minutes.
fault_stages() {
  # Faults: a broker, a Postgres and a Redis of the suite's own, stopped and killed.
  echo "== faults"
  npm run -s test:fault 2>&1
}
cluster_and_demo_stages() {
  local rc=0
  # Broker failover: a three-node cluster of the suite's own, its partition leader killed under load.
  if stage failover; then echo "== failover"; npm run -s test:failover 2>&1 || rc=1; fi
  if stage demo;     then demo_stage || rc=1; fi
  return "$rc"
}
# Demo: what a new user does first, `make up` then `make demo`, on a stack of its own: every port
# moved by CHAINPIPE_PORT_OFFSET (TEST_DEMO_PORT_OFFSET, or the first offset whose ports are all
# free), so it runs beside a `make up` stack of this or another checkout. A stack of that offset
# already up is used as it is and left running; one started here is stopped again.
demo_ports_free() {
  local offset="$1" p
  for p in $DEMO_BASE_PORTS 9092 9093; do
    port_open "$((p + offset))" && return 1
  done
  return 0
}
demo_stage() {
  echo "== demo"
  # The port table at offset 0, read once; each candidate offset is added to it.
  DEMO_BASE_PORTS="$(CHAINPIPE_PORT_OFFSET=0 npx --no-install tsx scripts/dev/apps.ts | awk '{ if ($2 != "-") print $2; print $3 }')"
  local demo_offset="${TEST_DEMO_PORT_OFFSET:-}" rc=0 o pidf
  if [ -z "$demo_offset" ]; then
    for o in 1000 2000 3000 4000 5000; do demo_ports_free "$o" && { demo_offset="$o"; break; }; done
  fi
  [ -n "$demo_offset" ] || { echo "demo: no free port offset for a stack of its own"; return 1; }
  export CHAINPIPE_PORT_OFFSET="$demo_offset"
  local demo_run=".run/port-offset-$demo_offset" running_before=0
  for pidf in "$demo_run"/pids/*.pid; do [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && running_before=1; done
  mkdir -p "$demo_run"
  if scripts/dev/up.sh > "$demo_run/demo-up.log" 2>&1; then
    npx --no-install tsx scripts/dev/demo.ts || { echo "demo: failed"; rc=1; }
  else
    echo "demo: make up failed:"; tail -n 40 "$demo_run/demo-up.log"; rc=1
  fi
  [ "$running_before" = 1 ] || scripts/dev/down.sh >/dev/null 2>&1
  unset CHAINPIPE_PORT_OFFSET
  return "$rc"
}

if stage integration || stage fuzz; then
  if ! wait "$broker_pid"; then cat "$OUT/broker.out"; echo "test: the test broker did not start"; exit 1; fi
  broker_pid=""
  cat "$OUT/broker.out"
fi
if stage faults; then run_bg faults fault_stages; fi
if stage failover || stage demo; then run_bg cluster-and-demo cluster_and_demo_stages; fi
if stage integration; then
  echo "== integration"
  npx --no-install mocha --config .mocharc.int.json --parallel --jobs "$JOBS" "${BROKER_SUITES[@]}" 2>&1 | tee -a "$LOG" || status=1
fi
# Fuzz: the public apps on ports of their own, every operation of their API documents probed with hostile requests.
if stage fuzz; then echo "== fuzz"; npm run -s test:fuzz 2>&1 | tee -a "$LOG" || status=1; fi
for name in faults cluster-and-demo; do
  if [ -n "${bg_pids[$name]:-}" ]; then finish "$name" log || status=1; fi
done

# grep finds nothing when nothing failed; that is not an error here.
passed=$( (grep -Eo '^ +[0-9]+ passing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
failed=$( (grep -Eo '^ +[0-9]+ failing' "$LOG" || true) | awk '{s+=$1} END {print s+0}')
# The failures again at the very end, where a log cut to its last lines still shows them.
if [ "$failed" != 0 ]; then
  echo "test: the failures:"
  grep -E -A 4 '^  [0-9]+\) ' "$LOG" | grep -Ev '^ +at ' | head -n 80
fi
echo "test: took $SECONDS s"
echo "test: $passed passed, $failed failed"
exit "$status"
