#!/usr/bin/env bash
# A single-node Apache Kafka (KRaft) on loopback, resolved from Maven Central. No Docker needed.
#
# usage: scripts/kafka/kafka.sh fetch|start|stop|status
#
# Environment (all optional):
#   KAFKA_STATE_DIR        jars, config, data, log and pid live here      (default .kafka)
#   KAFKA_LIB_DIR          where the jars are kept; shared between states (default .kafka/lib)
#   KAFKA_PORT             client (PLAINTEXT) port                         (default 9092)
#   KAFKA_CONTROLLER_PORT  KRaft controller port; never point clients here (default 9093)
#   KAFKA_KEEP_DATA=1      keep the data folder across starts (make up); tests start clean
#   KAFKA_HEAP_OPTS        JVM heap                                        (default -Xms256m -Xmx512m)
#   MVN_EXTRA_ARGS         extra mvn flags, e.g. -o with a warm ~/.m2
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/scripts/kafka"
STATE="${KAFKA_STATE_DIR:-$ROOT/.kafka}"
LIB="${KAFKA_LIB_DIR:-$ROOT/.kafka/lib}"
DATA="$STATE/data"; CONF="$STATE/server.properties"
OUT="$STATE/kafka.out"; PIDF="$STATE/kafka.pid"
PORT="${KAFKA_PORT:-9092}"; CPORT="${KAFKA_CONTROLLER_PORT:-9093}"
CLUSTER_ID="${KAFKA_CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}"   # any 22-char base64 UUID
HEAP="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
JVM="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true}"
LOG4J="-Dlog4j.configuration=file:$HERE/log4j.properties"

log() { echo "kafka: $*" >&2; }

fetch() {
  if compgen -G "$LIB/kafka_2.13-*.jar" >/dev/null; then return 0; fi
  command -v mvn >/dev/null || { log "mvn not found (apt-get install maven)"; exit 1; }
  command -v java >/dev/null || { log "java not found (apt-get install openjdk-17-jre-headless)"; exit 1; }
  log "fetching the broker from Maven Central into $LIB"
  mkdir -p "$LIB"
  mvn -B -ntp -q -f "$HERE/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$LIB" ${MVN_EXTRA_ARGS:-}
  for j in kafka_2.13 kafka-clients kafka-server kafka-metadata kafka-raft kafka-storage \
           kafka-group-coordinator scala-library reload4j slf4j-reload4j; do
    compgen -G "$LIB/$j-[0-9]*.jar" >/dev/null || { log "missing $j in $LIB"; exit 1; }
  done
}

render() {
  mkdir -p "$STATE"
  sed -e "s#@DATA_DIR@#$DATA#g" -e "s#@PORT@#$PORT#g" -e "s#@CPORT@#$CPORT#g" \
      "$HERE/server.properties.in" > "$CONF"
}

running() { [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  fetch
  if running; then log "already running on 127.0.0.1:$PORT (pid $(cat "$PIDF"))"; return 0; fi
  for p in "$PORT" "$CPORT"; do
    if port_open "$p"; then log "port $p is taken by another process; set KAFKA_PORT / KAFKA_CONTROLLER_PORT"; exit 1; fi
  done
  render
  [ "${KAFKA_KEEP_DATA:-0}" = 1 ] || rm -rf "$DATA"
  java -Xmx256m $LOG4J -cp "$LIB/*" kafka.tools.StorageTool \
       format -t "$CLUSTER_ID" -c "$CONF" --ignore-formatted >"$STATE/format.out" 2>&1 \
    || { cat "$STATE/format.out" >&2; exit 1; }
  : > "$OUT"
  nohup java $HEAP $JVM $LOG4J -cp "$LIB/*" kafka.Kafka "$CONF" >>"$OUT" 2>&1 &
  echo $! > "$PIDF"
  for _ in $(seq 1 240); do                       # up to 120 s on a busy machine
    if grep -q "Kafka Server started" "$OUT" && port_open "$PORT"; then
      log "ready on 127.0.0.1:$PORT"; return 0
    fi
    running || { log "broker exited during start:"; tail -n 60 "$OUT" >&2; rm -f "$PIDF"; exit 1; }
    sleep 0.5
  done
  log "did not start in 120 s"; tail -n 60 "$OUT" >&2; stop; exit 1
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

status() { if running; then echo "running pid $(cat "$PIDF") port $PORT"; else echo "stopped"; exit 3; fi; }

case "${1:-}" in
  fetch) fetch ;; start) start ;; stop) stop ;; status) status ;;
  *) echo "usage: $0 fetch|start|stop|status" >&2; exit 2 ;;
esac
