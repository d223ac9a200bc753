import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { MARKET_GATEWAY_ASYNC_INFO, MARKET_GATEWAY_CHANNELS, asyncApiDocument } from '@chainpipe/contracts';
import { createModularApp, type ApiInfo, type RouteModule } from '@chainpipe/http';
import type { Logger } from '@chainpipe/runtime';

export interface MarketGatewayOptions {
  logger: Logger;
  registry: Registry;
  timeoutMs: number;
  /** Token price (`/price/api/v1`) and candlestick (`/kline/api/v1`, `/api/v1`) modules. */
  modules: readonly RouteModule[];
}

export const MARKET_GATEWAY_API: ApiInfo = {
  title: 'chainpipe market data API',
  version: '1.0.0',
  description:
    'The token price service (`/price/api/v1`: chains, tokens, fiats, quotes, pool detail; envelope `{code, msg, data}`) and the candlestick service (`/kline/api/v1` and, for admin, debug and health, `/api/v1`: pools, candle history, live candles over WebSocket, market look-ups; envelope `{code, message, data}`). Every route except the debug ones and the live chart page (`/kline/demo`) needs `X-API-Key`; a browser WebSocket, which cannot send headers, may offer the key as the subprotocol `x-api-key.<key>` instead.',
  tags: [
    { name: 'reference data', description: 'price service: chains, tokens and fiats shared by every service' },
    { name: 'quotes', description: 'price service: latest quotes by token id or contract address' },
    { name: 'pools', description: 'price service pool detail, and the candlestick service’s registered pools' },
    { name: 'candles', description: 'candlestick service: history and live candles' },
    { name: 'market look-ups', description: 'candlestick service: relayed from the market data provider' },
    { name: 'debug and health', description: 'candlestick service: ingester and hub status, health' },
    { name: 'live chart page', description: 'candlestick service: a page drawing live candles of the active pools, and its scripts' },
  ],
};

/** The market data gateway: the token price and candlestick modules, one API document. */
export function createMarketGatewayApp(opts: MarketGatewayOptions): Express {
  return createModularApp({
    ...opts,
    info: MARKET_GATEWAY_API,
    // The schemas the routes were declared with describe the WebSocket messages too.
    asyncApi: asyncApiDocument(opts.modules[0].api.options.contracts, MARKET_GATEWAY_CHANNELS, MARKET_GATEWAY_ASYNC_INFO),
  });
}
