import { APP_PORTS } from '@chainpipe/runtime';

/**
 * The upstream configuration that points every app at upstream-sim on `base` (`http://host:port`).
 * No app has a default for any of these: production sets the real providers, `make up` writes
 * these values for the simulator's development port into .run/dev.env, and the test helpers
 * start apps with them (a test that runs a simulator of its own passes its own base).
 */
export function simulatorUpstreamEnv(base: string): Record<string, string> {
  const http = base.replace(/\/+$/, '');
  const ws = http.replace(/^http/, 'ws');
  return {
    // market-gateway
    POOL_UPSTREAM_URL: `${http}/geckoterminal/api/v2`,
    KLINE_MARKET_API_URL: `${http}/coingecko/api/v3`,
    // market-ingester (the key is shared with market-gateway's look-ups)
    MARKET_WS_URL: `${ws}/v1`,
    MARKET_API_KEY: SIMULATOR_API_KEY,
    // price-ingester
    QUOTES_SOURCE_URL: `${http}/cmc`,
    QUOTES_SOURCE_API_KEY: SIMULATOR_API_KEY,
    FIAT_RATES_SOURCE_URL: `${http}/oxr`,
    FIAT_RATES_APP_ID: SIMULATOR_API_KEY,
    // aggregator-gateway, order-tracker
    CHANGENOW_API_URL: `${http}/changenow`,
    CHANGENOW_API_KEY: SIMULATOR_API_KEY,
    THORNODE_API_URL: `${http}/thornode`,
    // tx-gateway, pending-compensator: every network at <base>/rpc/<network>
    CHAIN_RPC_DEFAULT_BASE: `${http}/rpc`,
  };
}

/** The simulator takes any non-empty key unless it is told one (SIM_*_API_KEY). */
export const SIMULATOR_API_KEY = 'development';

/** upstream-sim where `make up` runs it: its row of the port table. */
export const DEVELOPMENT_SIMULATOR_BASE = `http://127.0.0.1:${APP_PORTS['upstream-sim'].public}`;
