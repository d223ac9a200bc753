import { APP_PORTS, appNodeOptions, appPorts } from '@chainpipe/runtime';

/**
 * Prints the app table for `make up`, one app a line in start order: name, public port (- for
 * none), ops port, moved by CHAINPIPE_PORT_OFFSET, then the app's node options, if any
 * (space-separated). The tables themselves are `APP_PORTS` and `APP_NODE_OPTIONS` in libs/runtime.
 */
for (const name of Object.keys(APP_PORTS)) {
  const ports = appPorts(name)!;
  console.log([name, ports.public ?? '-', ports.ops, ...appNodeOptions(name)].join(' '));
}
