/**
 * The one port table of the system: every app's public port (absent for apps without a public
 * API) and ops port (`/metrics`, `/healthz`, `/readyz`). App configs take their defaults from it,
 * `make up` starts the apps in this order on these ports (`scripts/dev/apps.ts` prints it), and a
 * unit test keeps the README's port table equal to it. Tests never use these ports (they pass 0
 * or free ports).
 */
export interface AppPorts {
  readonly public?: number;
  readonly ops: number;
}

export const APP_PORTS = {
  'upstream-sim': { public: 8090, ops: 9190 },
  'chain-ingest': { public: 8082, ops: 9102 },
  'chain-parser': { ops: 9103 },
  'tx-gateway': { public: 8081, ops: 9101 },
  'tx-matcher': { ops: 9104 },
  'webhook-dispatcher': { ops: 9105 },
  'pending-compensator': { ops: 9106 },
  'market-ingester': { ops: 9107 },
  'kline-aggregator': { ops: 9108 },
  'price-ingester': { ops: 9109 },
  'price-writer': { ops: 9110 },
  'market-gateway': { public: 8080, ops: 9100 },
  'aggregator-gateway': { public: 8083, ops: 9111 },
  'order-tracker': { ops: 9112 },
  'order-executor': { ops: 9113 },
} as const satisfies Record<string, AppPorts>;

export type AppName = keyof typeof APP_PORTS;

/** Apps of the table with a public port. */
export type PublicAppName = { [K in AppName]: (typeof APP_PORTS)[K] extends { public: number } ? K : never }[AppName];

/**
 * CHAINPIPE_PORT_OFFSET (default 0) moves every port of the table, and the broker of `make up`
 * (9092), by the same amount, so a second stack on one machine takes ports of its own: `make
 * test`'s demo stage beside another checkout's `make up`, say. The apps (their port defaults and
 * the upstream URLs that point at the simulator), scripts/dev/up.sh (through scripts/dev/apps.ts)
 * and the demo all read it here.
 */
export const PORT_OFFSET_MAX = 20_000;

export function portOffset(env: NodeJS.ProcessEnv = process.env): number {
  const raw = (env.CHAINPIPE_PORT_OFFSET ?? '0').trim();
  const offset = Number(raw);
  if (!/^[0-9]+$/.test(raw) || offset > PORT_OFFSET_MAX) {
    throw new Error(`CHAINPIPE_PORT_OFFSET must be a whole number from 0 to ${PORT_OFFSET_MAX}, not ${JSON.stringify(raw)}`);
  }
  return offset;
}

/** The ports of an app of the table, moved by the port offset; undefined for names outside it (test apps, tools). */
export function appPorts(name: string, env: NodeJS.ProcessEnv = process.env): AppPorts | undefined {
  if (!Object.prototype.hasOwnProperty.call(APP_PORTS, name)) return undefined;
  const ports = (APP_PORTS as Record<string, AppPorts>)[name];
  const offset = portOffset(env);
  return ports.public === undefined ? { ops: ports.ops + offset } : { public: ports.public + offset, ops: ports.ops + offset };
}

/** The public port of an app of the table; throws for apps that have none (a wiring mistake). */
export function publicPort(name: PublicAppName, env: NodeJS.ProcessEnv = process.env): number {
  const port = appPorts(name, env)?.public;
  if (port === undefined) throw new Error(`${name} has no public port in the port table`);
  return port;
}

/** The client port of the `make up` broker (its controller listens on the next one), moved by the port offset. */
export function devKafkaPort(env: NodeJS.ProcessEnv = process.env): number {
  return 9092 + portOffset(env);
}

