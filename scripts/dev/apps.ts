import { APP_PORTS, appPorts } from '@chainpipe/runtime';

/**
 * Prints the port table for `make up`, one app a line in start order: name, public port (- for
 * none), ops port, moved by CHAINPIPE_PORT_OFFSET. The table itself is `APP_PORTS` in libs/runtime.
 */
for (const name of Object.keys(APP_PORTS)) {
  const ports = appPorts(name)!;
  console.log(`${name} ${ports.public ?? '-'} ${ports.ops}`);
}
