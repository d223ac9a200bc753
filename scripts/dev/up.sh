#!/usr/bin/env bash
# make up: Kafka, Postgres, Redis, migrations, topics, development credentials and every app,
# each in its own process with its log under .run/logs/. Returns once everything is ready.
# Apps, migrations, topics and the admin command run compiled (npm run build → dist/, plain
# node), as deployed; UP_FROM_SOURCE=1 runs the TypeScript sources through tsx instead, no build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# CHAINPIPE_PORT_OFFSET=N (default 0): a second stack on this machine, every port of the table and
# the broker's moved by N, with a run folder, broker state, database and Redis prefix of its own.
. scripts/dev/stack-env.sh
mkdir -p "$RUN/logs" "$RUN/pids"
ENV_FILE="$RUN/dev.env"

scripts/dev/services.sh
KAFKA_KEEP_DATA=1 scripts/kafka/kafka.sh start

# Development credentials, made once and kept: a new user gets working values, nothing is shared.
touch "$ENV_FILE"
add_env() { grep -q "^$1=" "$ENV_FILE" || echo "$1=$2" >> "$ENV_FILE"; }
add_env DATABASE_URL "postgres://postgres@127.0.0.1:5432/$STACK_DATABASE"
add_env KAFKA_BROKERS "127.0.0.1:$KAFKA_PORT"
add_env REDIS_URL "redis://127.0.0.1:6379/0"
add_env REDIS_KEY_PREFIX "$STACK_REDIS_PREFIX"
add_env STREAM_SECRET "$(node -e "process.stdout.write(require('crypto').randomBytes(24).toString('hex'))")"
add_env WEBHOOK_SECRET_KEY "$(node -e "process.stdout.write(require('crypto').randomBytes(32).toString('hex'))")"
# The CoinGecko key of the candlestick ingester and market look-ups; the simulator takes any key.
add_env MARKET_API_KEY "dev-$(node -e "process.stdout.write(require('crypto').randomBytes(8).toString('hex'))")"
# Development only: webhooks may go to a receiver on this machine over plain http.
add_env ALLOW_PRIVATE_WEBHOOK_TARGETS "true"
# Development only: the simulated chains reorganise only when asked (POST /sim/chain/{network}/reorg;
# SIM_REORG_PERCENT stays 0 here), so two blocks are enough before the order executor forwards a
# deposit (production keeps its per-chain counts, default 12).
add_env ORDER_EXECUTOR_CONFIRMATIONS_DEFAULT "2"
# Every third-party upstream (apps have no default for them): upstream-sim on its port. And the
# platform's development keys: a mnemonic generated once and kept here (DEV_SIGNER_MNEMONIC, the
# development signer's), the deposit addresses' extended public keys derived from it.
KEPT_MNEMONIC="$(sed -n 's/^DEV_SIGNER_MNEMONIC=//p' "$ENV_FILE")"
# The simulator's funded accounts derive from the kept mnemonic: always written anew, so an env
# file of an earlier stack gets the accounts added since (the gas station).
set_env() { sed -i "/^$1=/d" "$ENV_FILE"; echo "$1=$2" >> "$ENV_FILE"; }
while IFS='=' read -r name value; do
  if [ "$name" = SIM_FUNDED_ACCOUNTS ]; then set_env "$name" "$value"; else add_env "$name" "$value"; fi
done < <(DEV_SIGNER_MNEMONIC="$KEPT_MNEMONIC" npx --no-install tsx scripts/dev/upstream-env.ts)
chmod 600 "$ENV_FILE"
set -a; . "$ENV_FILE"; set +a

FROM_SOURCE="${UP_FROM_SOURCE:-0}"
# CHAINPIPE_BUILT=1: dist/ already holds the build of this tree (make test builds it once per run).
[ "$FROM_SOURCE" = 1 ] || [ "${CHAINPIPE_BUILT:-0}" = 1 ] || npm run -s build
# node_cmd <source entry> [node option ...]: the command running it, compiled or from source, into CMD.
node_cmd() {
  local entry="$1"; shift
  if [ "$FROM_SOURCE" = 1 ]; then CMD=(node "$@" --require tsx/cjs "$entry"); else CMD=(node "$@" "dist/${entry%.ts}.js"); fi
}

node_cmd libs/db/src/migrate-cli.ts; "${CMD[@]}" >/dev/null
node_cmd scripts/create-topics.ts; "${CMD[@]}"
node_cmd apps/admin/src/main.ts; ADMIN=("${CMD[@]}")
if ! grep -q '^DEMO_API_KEY=' "$ENV_FILE"; then
  key="$("${ADMIN[@]}" app:create --name "Demo application" --id demo --quiet)"
  echo "DEMO_API_KEY=$key" >> "$ENV_FILE"
  export DEMO_API_KEY="$key"
fi
if ! grep -q '^DEMO_OPERATOR_KEY=' "$ENV_FILE"; then
  # an operator's key: registers and activates the pools every application shares (the demo's candlestick pool)
  key="$("${ADMIN[@]}" app:create --name "Operators" --id operators --role operator --quiet)"
  echo "DEMO_OPERATOR_KEY=$key" >> "$ENV_FILE"
  export DEMO_OPERATOR_KEY="$key"
fi
if ! grep -q '^DEMO_INTEGRATOR_KEY=' "$ENV_FILE"; then
  # an integrator of the aggregator API with a 0.25 % commission key
  key="$("${ADMIN[@]}" integrator:create --name "Demo integrator" --fee-rate 0.25 --quiet)"
  echo "DEMO_INTEGRATOR_KEY=$key" >> "$ENV_FILE"
  export DEMO_INTEGRATOR_KEY="$key"
fi

# wait_ready NAME OPS_PORT: until the app's /readyz answers 200 (60 s at most), or exits 1 with its log's tail.
wait_ready() {
  local name="$1" ops="$2" ok=0
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$ops/readyz" >/dev/null 2>&1; then ok=1; break; fi
    kill -0 "$(cat "$RUN/pids/$name.pid")" 2>/dev/null || break
    sleep 0.5
  done
  if [ "$ok" != 1 ]; then echo "up: $name did not become ready; last lines of .run/logs/$name.log:" >&2; tail -n 30 "$RUN/logs/$name.log" >&2; exit 1; fi
}

# The app table (APP_PORTS and APP_NODE_OPTIONS in libs/runtime), in start order; apps not
# written yet are skipped.
APPS="$(npx --no-install tsx scripts/dev/apps.ts)"
started=()
while read -r name port ops node_options; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [ -f "apps/$name/src/main.ts" ] || continue
  pidf="$RUN/pids/$name.pid"
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then started+=("$name $port $ops"); continue; fi
  # A copy make up did not start (one run by hand from source) holds the app's ops port: a second
  # copy would only fail on the port while that one answered /readyz for it. Left as it is.
  if (exec 3<>"/dev/tcp/127.0.0.1/$ops") 2>/dev/null; then
    echo "up: $name: its ops port $ops is taken by a process make up did not start (your own copy?): left running, not restarted; make down will not stop it" >&2
    rm -f "$pidf"
    started+=("$name $port $ops"); continue
  fi
  envs=(OPS_PORT="$ops"); [ "$port" != "-" ] && envs+=(PORT="$port")
  # shellcheck disable=SC2086 # the options are words of their own
  node_cmd "apps/$name/src/main.ts" $node_options
  env "${envs[@]}" LOG_PRETTY=false nohup "${CMD[@]}" >>"$RUN/logs/$name.log" 2>&1 &
  echo $! > "$pidf"
  started+=("$name $port $ops")
  # the stand-in of every third-party upstream comes up first: an app whose first poll finds it
  # down waits a whole poll interval (a minute for the quotes) before it is ready
  [ "$name" = upstream-sim ] && wait_ready "$name" "$ops"
done <<< "$APPS"

for entry in "${started[@]}"; do
  read -r name port ops <<<"$entry"
  wait_ready "$name" "$ops"
done

echo
echo "chainpipe is up. Point clients here:"
printf '  %-16s %-28s %s\n' APP PUBLIC OPS
for entry in "${started[@]}"; do
  read -r name port ops <<<"$entry"
  pub="-"; [ "$port" != "-" ] && pub="http://127.0.0.1:$port"
  printf '  %-16s %-28s %s\n' "$name" "$pub" "http://127.0.0.1:$ops/metrics"
done
printf '  %-16s %-28s\n' kafka "127.0.0.1:$KAFKA_PORT"
echo
echo "Development credentials (also in ${ENV_FILE#"$ROOT/"}):"
grep -E '^(STREAM_SECRET|DEMO_API_KEY|DEMO_OPERATOR_KEY|DEMO_INTEGRATOR_KEY)=' "$ENV_FILE" | sed 's/^/  /'
echo
echo "API documents: http://127.0.0.1:<public port>/docs (OpenAPI at /openapi.json, WebSockets at /asyncapi.json)"
echo "Try:  npm run replay -- --all     (posts fixture blocks to chain-ingest)"
echo "Logs: ${RUN#"$ROOT/"}/logs/<app>.log    Stop: make down${STACK_OFFSET_NOTE}"
