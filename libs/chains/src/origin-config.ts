import { ConfigError, int, str, url } from '@chainpipe/runtime/pure';
import { networkByName, NETWORKS } from './networks';

/**
 * Config of the apps that ask chain nodes (tx-gateway's RPC proxy and origin fetch,
 * pending-compensator). Every known network needs an origin: listed in CHAIN_RPC_URLS, or under
 * CHAIN_RPC_DEFAULT_BASE; `chainOriginsFromConfig` refuses the boot otherwise.
 */
export const chainOriginConfig = {
  CHAIN_RPC_URLS: str({
    default: '',
    doc: 'chain origins, comma-separated network=url pairs (ethereum-mainnet=https://…); networks not listed use CHAIN_RPC_DEFAULT_BASE/<network>',
  }),
  CHAIN_RPC_DEFAULT_BASE: url({ default: '', protocols: ['http', 'https'], doc: 'base URL of origins not listed in CHAIN_RPC_URLS (<base>/<network>); required unless CHAIN_RPC_URLS lists every network' }),
  CHAIN_RPC_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'deadline of one call to a chain origin' }),
};

/**
 * A chain origin failed: unreachable, timed out, answered non-2xx, answered a JSON-RPC error, or
 * answered something unusable. Thrown by the JSON-RPC client (`jsonRpcCall` of
 * `@chainpipe/upstreams`) and by the origin fetch that reads its answers (`fetchFromOrigin` of
 * `@chainpipe/tx-parsers`); a plain class, no I/O, so both layers can name it.
 */
export class OriginError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'timeout' | 'http' | 'rpc' | 'invalid',
    readonly rpcError?: { code: number; message: string; data?: unknown },
  ) {
    super(message);
    this.name = 'OriginError';
  }
}

export const KNOWN_NETWORK_NAMES = NETWORKS.map((n) => n.network);

export interface ChainOrigins {
  /** The node URL of a network, or undefined when the network is unknown. */
  urlFor(network: string): string | undefined;
}

/**
 * Origins from config: explicit `network=url` pairs, and `<base>/<network>` for every other
 * known network (in development the base is the upstream simulator). Which node serves which
 * network is chain knowledge checked against the network list, with no I/O: it stays here,
 * while the call to the URL is `jsonRpcCall` of `@chainpipe/upstreams`.
 */
export function parseChainOrigins(pairs: string, defaultBase: string | null, setting = 'CHAIN_RPC_URLS'): ChainOrigins {
  const explicit = new Map<string, string>();
  for (const [index, pair] of pairs.split(',').map((s) => s.trim()).filter(Boolean).entries()) {
    const eq = pair.indexOf('=');
    // The entry itself is not echoed: a URL given without its network= may carry a provider key.
    if (eq <= 0) throw new Error(`${setting} entry ${index + 1} is not network=url`);
    const network = pair.slice(0, eq).trim().toLowerCase();
    const url = pair.slice(eq + 1).trim();
    if (!networkByName(network)) {
      // Only a name of a network's shape is echoed: the text before '=' of a URL's query may carry credentials.
      throw new Error(/^[a-z0-9-]{1,40}$/.test(network) ? `${setting} names unknown network ${network}` : `${setting} entry ${index + 1} names no known network`);
    }
    // A malformed URL surfaces at boot, named by its network only (the text may carry a key).
    if (!URL.canParse(url)) throw new Error(`${setting} has no valid URL for ${network}`);
    explicit.set(network, url);
  }
  const base = defaultBase?.replace(/\/+$/, '');
  return {
    urlFor(network) {
      const n = networkByName(network);
      if (!n) return undefined;
      return explicit.get(n.network) ?? (base ? `${base}/${n.network}` : undefined);
    },
  };
}

/**
 * The origins of a booting app: every known network must have one, or the app stops at boot
 * with a ConfigError naming what is missing (a node URL found missing at the first call would
 * fail requests at run time instead).
 */
export function chainOriginsFromConfig(config: { CHAIN_RPC_URLS: string; CHAIN_RPC_DEFAULT_BASE: string }): ChainOrigins {
  let origins: ChainOrigins;
  try {
    origins = parseChainOrigins(config.CHAIN_RPC_URLS, config.CHAIN_RPC_DEFAULT_BASE || null);
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  const missing = KNOWN_NETWORK_NAMES.filter((network) => origins.urlFor(network) === undefined);
  if (missing.length) {
    throw new ConfigError([`CHAIN_RPC_DEFAULT_BASE is required: CHAIN_RPC_URLS names no origin for ${missing.join(', ')} (list every network there, or set the base of <base>/<network>)`]);
  }
  return origins;
}
