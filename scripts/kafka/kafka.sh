#!/usr/bin/env bash
# Apache Kafka (KRaft) on loopback, resolved from Maven Central. No Docker needed. One node for
# development and tests, or a three-node cluster with production's replication settings
# (replication factor 3, min.insync.replicas 2) for failover tests.
#
# usage: scripts/kafka/kafka.sh fetch|start|stop|status
#        scripts/kafka/kafka.sh cluster-start|cluster-stop|cluster-status
#        scripts/kafka/kafka.sh node-start|node-stop|node-kill N      (N = 1..3, a cluster node)
#
# Environment (all optional):
#   KAFKA_VERSION          broker version from Maven Central; the 3.x and 4.x lines are both
#                          supported and tested                            (default 3.9.1)
#   KAFKA_STATE_DIR        jars, config, data, log and pid live here      (default .kafka)
#   KAFKA_LIB_DIR          where the jars are kept; shared between states (default .kafka/lib/VERSION)
#   KAFKA_PORT             client (PLAINTEXT) port                         (default 9092)
#   KAFKA_CONTROLLER_PORT  KRaft controller port; never point clients here (default 9093)
#   KAFKA_CLUSTER_DIR      state of the three-node cluster, node N in nodeN (default .kafka-cluster)
#   KAFKA_CLUSTER_PORT     node N listens on KAFKA_CLUSTER_PORT+2(N-1), its controller on the next
#                          port: six consecutive ports                     (default 29092)
#   KAFKA_KEEP_DATA=1      keep the data folder across starts (make up); tests start clean
#                          (node-start always keeps it: a restarted node rejoins with its log)
#   KAFKA_HEAP_OPTS        JVM heap                                        (default -Xms256m -Xmx512m)
#   MVN_EXTRA_ARGS         extra mvn flags, e.g. -o with a warm ~/.m2
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/scripts/kafka"
VERSION="${KAFKA_VERSION:-3.9.1}"
LINE="${VERSION%%.*}"
case "$LINE" in 3|4) ;; *) echo "kafka: KAFKA_VERSION $VERSION is not of a supported line (3.x, 4.x)" >&2; exit 2 ;; esac
LIB="${KAFKA_LIB_DIR:-$ROOT/.kafka/lib/$VERSION}"
CLUSTER_DIR="${KAFKA_CLUSTER_DIR:-$ROOT/.kafka-cluster}"
CLUSTER_PORT="${KAFKA_CLUSTER_PORT:-29092}"
CLUSTER_SIZE=3
CLUSTER_ID="${KAFKA_CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}"   # any 22-char base64 UUID
HEAP="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
JVM="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true}"
# 3.x logs through log4j 1 (reload4j), 4.x through log4j2: the same levels in each one's format.
if [ "$LINE" = 3 ]; then LOG4J="-Dlog4j.configuration=file:$HERE/log4j.properties"
else LOG4J="-Dlog4j2.configurationFile=$HERE/log4j2.xml"; fi

# The node the commands act on: state folder, ports, id, voters, replication settings.
use_node() {
  STATE="$1"; PORT="$2"; CPORT="$3"; NODE_ID="$4"; VOTERS="$5"; RF="$6"; MIN_ISR="$7"
  DATA="$STATE/data"; CONF="$STATE/server.properties"; OUT="$STATE/kafka.out"; PIDF="$STATE/kafka.pid"
}
use_single() {
  local cport="${KAFKA_CONTROLLER_PORT:-9093}"
  use_node "${KAFKA_STATE_DIR:-$ROOT/.kafka}" "${KAFKA_PORT:-9092}" "$cport" 1 "1@127.0.0.1:$cport" 1 1
}
cluster_client_port() { echo $((CLUSTER_PORT + 2 * ($1 - 1))); }
use_cluster_node() {
  local n="$1" voters="" i
  [[ "$n" =~ ^[1-3]$ ]] || { log "node must be 1, 2 or 3 (got '$n')"; exit 2; }
  for i in $(seq 1 "$CLUSTER_SIZE"); do voters="${voters:+$voters,}$i@127.0.0.1:$(($(cluster_client_port "$i") + 1))"; done
  use_node "$CLUSTER_DIR/node$n" "$(cluster_client_port "$n")" "$(($(cluster_client_port "$n") + 1))" "$n" "$voters" 3 2
}
cluster_bootstrap() {
  local out="" i
  for i in $(seq 1 "$CLUSTER_SIZE"); do out="${out:+$out,}127.0.0.1:$(cluster_client_port "$i")"; done
  echo "$out"
}

log() { echo "kafka: $*" >&2; }

fetch() {
  if [ -f "$LIB/kafka_2.13-$VERSION.jar" ]; then return 0; fi
  command -v mvn >/dev/null || { log "mvn not found (apt-get install maven)"; exit 1; }
  command -v java >/dev/null || { log "java not found (apt-get install openjdk-17-jre-headless)"; exit 1; }
  log "fetching broker $VERSION from Maven Central into $LIB"
  mkdir -p "$LIB"
  mvn -B -ntp -q -f "$HERE/pom.xml" dependency:copy-dependencies \
      -Dkafka.version="$VERSION" -Dkafka.line="$LINE" \
      -DincludeScope=runtime -DoutputDirectory="$LIB" ${MVN_EXTRA_ARGS:-}
  local logging="reload4j slf4j-reload4j"
  [ "$LINE" = 3 ] || logging="log4j-core log4j-slf4j-impl"
  for j in kafka_2.13 kafka-clients kafka-server kafka-metadata kafka-raft kafka-storage \
           kafka-group-coordinator scala-library $logging; do
    compgen -G "$LIB/$j-[0-9]*.jar" >/dev/null || { log "missing $j in $LIB"; exit 1; }
  done
}

render() {
  mkdir -p "$STATE"
  sed -e "s#@DATA_DIR@#$DATA#g" -e "s#@PORT@#$PORT#g" -e "s#@CPORT@#$CPORT#g" \
      -e "s#@NODE_ID@#$NODE_ID#g" -e "s#@VOTERS@#$VOTERS#g" -e "s#@RF@#$RF#g" -e "s#@MIN_ISR@#$MIN_ISR#g" \
      "$HERE/server.properties.in" > "$CONF"
}

running() { [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Formats (unless the data is kept) and starts the node in the background; does not wait.
launch() {
  local keep="$1"
  if running; then log "already running on 127.0.0.1:$PORT (pid $(cat "$PIDF"))"; return 0; fi
  for p in "$PORT" "$CPORT"; do
    if port_open "$p"; then log "port $p is taken by another process; choose other ports"; exit 1; fi
  done
  render
  [ "$keep" = 1 ] || rm -rf "$DATA"
  java -Xmx256m $LOG4J -cp "$LIB/*" kafka.tools.StorageTool \
       format -t "$CLUSTER_ID" -c "$CONF" --ignore-formatted >"$STATE/format.out" 2>&1 \
    || { cat "$STATE/format.out" >&2; exit 1; }
  : > "$OUT"
  nohup java $HEAP $JVM $LOG4J -cp "$LIB/*" kafka.Kafka "$CONF" >>"$OUT" 2>&1 &
  echo $! > "$PIDF"
}

# Waits until the node logged "Kafka Server started" (a cluster node only gets there once the
# controller quorum has a leader, so start every node before waiting for any).
wait_ready() {
  for _ in $(seq 1 240); do                       # up to 120 s on a busy machine
    if grep -q "Kafka Server started" "$OUT" && port_open "$PORT"; then
      log "node $NODE_ID ready on 127.0.0.1:$PORT"; return 0
    fi
    running || { log "node $NODE_ID exited during start:"; tail -n 60 "$OUT" >&2; rm -f "$PIDF"; return 1; }
    sleep 0.5
  done
  log "node $NODE_ID did not start in 120 s"; tail -n 60 "$OUT" >&2; return 1
}

start() {
  fetch
  launch "${KAFKA_KEEP_DATA:-0}"
  wait_ready || { stop; exit 1; }
}

cluster_start() {
  fetch
  local i pids=()
  # In parallel: formatting starts a JVM per node, seconds each on a busy machine.
  for i in $(seq 1 "$CLUSTER_SIZE"); do (use_cluster_node "$i"; launch "${KAFKA_KEEP_DATA:-0}") & pids+=($!); done
  for i in "${pids[@]}"; do wait "$i" || { cluster_stop; exit 1; }; done
  for i in $(seq 1 "$CLUSTER_SIZE"); do
    use_cluster_node "$i"
    wait_ready || { cluster_stop; exit 1; }
  done
  echo "$(cluster_bootstrap)"
}

cluster_stop() {
  local i
  for i in $(seq 1 "$CLUSTER_SIZE"); do use_cluster_node "$i"; stop & done
  wait
}

stop() {
  [ -f "$PIDF" ] || return 0
  local pid; pid="$(cat "$PIDF")"
  kill "$pid" 2>/dev/null || true                 # SIGTERM: the broker's shutdown hook runs
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PIDF"; log "stopped"; return 0; }
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true; rm -f "$PIDF"; log "killed after 30 s"
}

# SIGKILL: the node dies without its shutdown hook, as in a crash or a lost machine.
hard_kill() {
  [ -f "$PIDF" ] || return 0
  local pid; pid="$(cat "$PIDF")"
  kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  rm -f "$PIDF"; log "node $NODE_ID killed"
}

status() { if running; then echo "running pid $(cat "$PIDF") port $PORT"; else echo "stopped"; return 3; fi; }

cluster_status() {
  local i rc=0
  for i in $(seq 1 "$CLUSTER_SIZE"); do use_cluster_node "$i"; printf 'node %s: ' "$i"; status || rc=3; done
  return "$rc"
}

case "${1:-}" in
  fetch) fetch ;;
  start) use_single; start ;;
  stop) use_single; stop ;;
  status) use_single; status ;;
  cluster-start) cluster_start ;;
  cluster-stop) cluster_stop ;;
  cluster-status) cluster_status ;;
  node-start) use_cluster_node "${2:-}"; fetch; launch 1; wait_ready ;;
  node-stop) use_cluster_node "${2:-}"; stop ;;
  node-kill) use_cluster_node "${2:-}"; hard_kill ;;
  *) echo "usage: $0 fetch|start|stop|status|cluster-start|cluster-stop|cluster-status|node-start N|node-stop N|node-kill N" >&2; exit 2 ;;
esac
