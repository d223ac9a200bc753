import { APP_PORTS } from '@chainpipe/runtime';

/**
 * Prints the port table for `make up`, one app a line in start order: name, public port (- for
 * none), ops port. The table itself is `APP_PORTS` in libs/runtime.
 */
for (const [name, ports] of Object.entries(APP_PORTS)) {
  const pub = 'public' in ports ? String(ports.public) : '-';
  console.log(`${name} ${pub} ${ports.ops}`);
}
