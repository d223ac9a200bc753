import { messageEnvelope, msgEnvelope, type EnvelopeStyle } from '@chainpipe/http';

/**
 * Which envelope the management endpoints answer in, by path: `message` for monitored addresses
 * app config / webhook retry and pool trades, `msg` for the RPC proxy (spec, "Response envelopes"). Decided
 * from the path alone so that errors raised before a router runs (401/403, invalid JSON, 413,
 * timeouts) use the route's style too.
 */
export const ADDRESS_PATH_PREFIXES = ['/tx/api/v1/addresses', '/api/v1/address'] as const;
export const APP_CONFIG_PATH_PREFIXES = ['/tx/api/v1/app'] as const;
export const DEX_POOL_PATH_PREFIXES = ['/tx/api/v1/dex-pools'] as const;
export const RPC_PROXY_PATHS = ['/api/v1/rpcproxy', '/tx/api/v1/rpcproxy'] as const;

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** For createHttpApp's `envelopeFor`; undefined for paths of other route groups. */
export function managementEnvelopeFor(path: string): EnvelopeStyle | undefined {
  // Express matches routes case-insensitively and with an optional trailing slash: so does this.
  const p = path.toLowerCase();
  if ([...ADDRESS_PATH_PREFIXES, ...APP_CONFIG_PATH_PREFIXES, ...DEX_POOL_PATH_PREFIXES].some((prefix) => under(p, prefix))) return messageEnvelope;
  if (RPC_PROXY_PATHS.some((prefix) => under(p, prefix))) return msgEnvelope;
  return undefined;
}
