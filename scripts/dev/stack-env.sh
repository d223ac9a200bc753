# Sourced by up.sh and down.sh (ROOT set): where the development stack of CHAINPIPE_PORT_OFFSET
# lives. Offset 0 (the default) is the stack of the README: .run, the broker on 9092 with its state
# in .kafka, database chainpipe. Offset N moves every port by N (the apps read the same variable
# through the port table of libs/runtime) and gives the stack a run folder, a broker state,
# a database and a Redis key prefix of its own, so it runs beside the stack of another checkout.
STACK_OFFSET="${CHAINPIPE_PORT_OFFSET:-0}"
if ! [[ "$STACK_OFFSET" =~ ^[0-9]+$ ]] || [ "$STACK_OFFSET" -gt 20000 ]; then
  echo "CHAINPIPE_PORT_OFFSET must be a whole number from 0 to 20000, not '$STACK_OFFSET'" >&2
  exit 2
fi
if [ "$STACK_OFFSET" = 0 ]; then
  RUN="$ROOT/.run"
  export KAFKA_PORT="${KAFKA_PORT:-9092}"
  STACK_DATABASE=chainpipe
  STACK_REDIS_PREFIX="chainpipe:"
  STACK_OFFSET_NOTE=""
else
  RUN="$ROOT/.run/port-offset-$STACK_OFFSET"
  # 9092 + N: devKafkaPort of libs/runtime, the apps' KAFKA_BROKERS default.
  export KAFKA_PORT="$((9092 + STACK_OFFSET))" KAFKA_CONTROLLER_PORT="$((9093 + STACK_OFFSET))"
  export KAFKA_STATE_DIR="$ROOT/.kafka/port-offset-$STACK_OFFSET"
  STACK_DATABASE="chainpipe_port_offset_$STACK_OFFSET"
  STACK_REDIS_PREFIX="chainpipe-$STACK_OFFSET:"
  STACK_OFFSET_NOTE=" (with CHAINPIPE_PORT_OFFSET=$STACK_OFFSET)"
fi
