#!/usr/bin/env bash
# make down: stops every app `make up` started (SIGTERM, then SIGKILL after 30 s) and the broker.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
for pidf in .run/pids/*.pid; do
  [ -f "$pidf" ] || continue
  pid="$(cat "$pidf")"; name="$(basename "$pidf" .pid)"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "down: stopped $name"
  fi
  rm -f "$pidf"
done
scripts/kafka/kafka.sh stop
