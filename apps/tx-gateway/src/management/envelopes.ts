import { messageEnvelope, msgEnvelope, type EnvelopeStyle } from '@chainpipe/http';

/**
 * Which envelope the management route modules answer in, by path: `message` for monitored
 * addresses, app config / webhook retry and pool trades, `msg` for the RPC proxy (spec, "Response
 * envelopes"); the query and push paths take the app's default (`msg`). Decided from the path
 * alone so that errors raised before a router runs (401/403, invalid JSON, 413, timeouts) use the
 * route's style too.
 */
export const ADDRESS_PATH_PREFIXES = ['/tx/api/v1/addresses', '/api/v1/address'] as const;
export const APP_CONFIG_PATH_PREFIXES = ['/tx/api/v1/app'] as const;
export const DEX_POOL_PATH_PREFIXES = ['/tx/api/v1/dex-pools'] as const;
export const RPC_PROXY_PATHS = ['/api/v1/rpcproxy', '/tx/api/v1/rpcproxy'] as const;

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** A route module's `envelopeFor`: `style` for paths under the prefixes, undefined for any other. */
export function envelopeUnder(prefixes: readonly string[], style: EnvelopeStyle): (path: string) => EnvelopeStyle | undefined {
  // Express matches routes case-insensitively and with an optional trailing slash: so does this.
  return (path) => {
    const p = path.toLowerCase();
    return prefixes.some((prefix) => under(p, prefix)) ? style : undefined;
  };
}

export const addressesEnvelopeFor = envelopeUnder(ADDRESS_PATH_PREFIXES, messageEnvelope);
export const appConfigEnvelopeFor = envelopeUnder(APP_CONFIG_PATH_PREFIXES, messageEnvelope);
export const dexPoolsEnvelopeFor = envelopeUnder(DEX_POOL_PATH_PREFIXES, messageEnvelope);
export const rpcProxyEnvelopeFor = envelopeUnder(RPC_PROXY_PATHS, msgEnvelope);
