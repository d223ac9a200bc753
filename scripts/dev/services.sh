#!/usr/bin/env bash
# Makes sure the machine's PostgreSQL and Redis are running; starts them if they are stopped.
# They are reached at PGHOST/PGPORT (127.0.0.1:5432) and REDIS_HOST/REDIS_PORT (127.0.0.1:6379).
set -euo pipefail
PGHOST="${PGHOST:-127.0.0.1}"; PGPORT="${PGPORT:-5432}"
REDIS_HOST="${REDIS_HOST:-127.0.0.1}"; REDIS_PORT="${REDIS_PORT:-6379}"

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

ensure_postgres() {
  port_open "$PGHOST" "$PGPORT" && return 0
  echo "services: PostgreSQL is not answering on $PGHOST:$PGPORT, starting it" >&2
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    for v in $(ls /etc/postgresql); do pg_ctlcluster --skip-systemctl-redirect "$v" main start || true; done
  else
    echo "services: no PostgreSQL here; install it (apt-get install postgresql) or set DATABASE_URL" >&2; exit 1
  fi
  for _ in $(seq 1 60); do port_open "$PGHOST" "$PGPORT" && return 0; sleep 0.5; done
  echo "services: PostgreSQL did not start" >&2; exit 1
}

ensure_redis() {
  port_open "$REDIS_HOST" "$REDIS_PORT" && return 0
  echo "services: Redis is not answering on $REDIS_HOST:$REDIS_PORT, starting it" >&2
  command -v redis-server >/dev/null || { echo "services: no redis-server here; install it (apt-get install redis-server)" >&2; exit 1; }
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/chainpipe.log
  for _ in $(seq 1 40); do port_open "$REDIS_HOST" "$REDIS_PORT" && return 0; sleep 0.25; done
  echo "services: Redis did not start" >&2; exit 1
}

ensure_postgres
ensure_redis
