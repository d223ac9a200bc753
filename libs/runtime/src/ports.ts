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
} as const satisfies Record<string, AppPorts>;

export type AppName = keyof typeof APP_PORTS;

/** Apps of the table with a public port. */
export type PublicAppName = { [K in AppName]: (typeof APP_PORTS)[K] extends { public: number } ? K : never }[AppName];

/** The ports of an app of the table; undefined for names outside it (test apps, tools). */
export function appPorts(name: string): AppPorts | undefined {
  return Object.prototype.hasOwnProperty.call(APP_PORTS, name) ? (APP_PORTS as Record<string, AppPorts>)[name] : undefined;
}

/** The public port of an app of the table; throws for apps that have none (a wiring mistake). */
export function publicPort(name: PublicAppName): number {
  const port = appPorts(name)?.public;
  if (port === undefined) throw new Error(`${name} has no public port in the port table`);
  return port;
}
