#!/usr/bin/env bash
# make down: stops every app `make up` started and then the broker. The apps get SIGTERM all at
# once (each drains on its own; none waits for another), SIGKILL after 30 s.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. scripts/dev/stack-env.sh   # the stack of CHAINPIPE_PORT_OFFSET (default 0)
declare -A alive=()
for pidf in "$RUN"/pids/*.pid; do
  [ -f "$pidf" ] || continue
  pid="$(cat "$pidf")"; name="$(basename "$pidf" .pid)"
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; alive[$name]="$pid"; fi
  rm -f "$pidf"
done
for _ in $(seq 1 60); do
  for name in "${!alive[@]}"; do
    kill -0 "${alive[$name]}" 2>/dev/null || { echo "down: stopped $name"; unset "alive[$name]"; }
  done
  [ "${#alive[@]}" -eq 0 ] && break
  sleep 0.5
done
for name in "${!alive[@]}"; do kill -KILL "${alive[$name]}" 2>/dev/null; echo "down: killed $name after 30 s"; done
scripts/kafka/kafka.sh stop
