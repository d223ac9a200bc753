import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler, type Router } from 'express';
import { API_KEY_HEADER } from '@chainpipe/kline';
import type { OhlcvStreamServer } from './ohlcv-stream';
import type { PoolsSource } from './pools-source';
import type { StickyFaults } from './router';

/** Base path of the CoinGecko Pro REST API (`https://pro-api.coingecko.com/api/v3`). */
export const COINGECKO_REST_BASE = '/coingecko/api/v3';

/** The recorded top-holders example (`onchain/networks/{network}/tokens/{address}/top_holders`). */
export function loadTopHolders(fixturesDir: string): unknown {
  return JSON.parse(readFileSync(path.join(fixturesDir, 'upstream', 'coingecko-oas-example.onchain_networks_solana_tokens_top_holders.json'), 'utf8'));
}

export interface CoingeckoDeps {
  pools: PoolsSource;
  topHolders: any;
  faults: StickyFaults;
  stream: OhlcvStreamServer;
  /** Empty: any non-empty key is accepted. */
  apiKey: string;
}

/** CoinGecko's error body: `{status: {error_code, error_message}}`. */
const cgError = (code: number, message: string) => ({ status: { error_code: code, error_message: message } });

/**
 * CoinGecko's on-chain REST look-ups under `/coingecko/api/v3` (key in `x-cg-pro-api-key`):
 * - `onchain/networks/{network}/pools/{address}`: the GeckoTerminal pool detail (same payload;
 *   the pools of the fixtures, unknown ones 404 as upstream);
 * - `onchain/networks/{network}/tokens/{address}/top_holders`: the recorded example for any
 *   token, its id set to the requested one, cut to `holders`;
 * - `coins/{platform}/contract/{address}`: no recorded example exists; the documented top-level
 *   fields with placeholder values;
 * - `onchain/networks/{network}/pools/{address}/ohlcv/{timeframe}` (`minute` 1/5/15, `hour`
 *   1/4/12, `day` 1; `before_timestamp`, `limit` up to 1000, `token`): the candles the
 *   OnchainOHLCV stream sent of that pool (its 1s subscriptions), newest first, as
 *   `data.attributes.ohlcv_list` of `[time, open, high, low, close, volume]`.
 * An outage switched on with `PUT /sim/faults/coingecko` answers CoinGecko's 429 (`error`) or a
 * plain 500 (`http500`). Stream controls: `POST /sim/coingecko/ws/drop[?outage_ms=N]` cuts every
 * OnchainOHLCV connection (and refuses new ones for N ms), `GET /sim/coingecko/ws/status` lists sockets and their subscriptions,
 * `PUT /sim/coingecko/ws/refused/{network:address}` makes every `set_pools` naming that pool fail
 * (`DELETE` lifts it).
 */
export function coingeckoRouter(deps: CoingeckoDeps): Router {
  const router = express.Router();
  const guard: RequestHandler = (req, res, next) => {
    const key = req.header(API_KEY_HEADER);
    if (!key || (deps.apiKey !== '' && key !== deps.apiKey)) return void res.status(401).json(cgError(10002, 'API Key Missing or invalid'));
    const fault = deps.faults.get('coingecko');
    if (fault === 'http500') return void res.status(500).type('text/plain').send('simulated upstream outage (http500)');
    if (fault === 'error') return void res.status(429).json(cgError(429, "You've exceeded the Rate Limit."));
    next();
  };

  router.get(`${COINGECKO_REST_BASE}/onchain/networks/:network/pools/:address`, guard, (req, res) => {
    const detail = deps.pools.detail(String(req.params.network), String(req.params.address));
    if (!detail) return void res.status(404).json(cgError(404, 'Not Found'));
    res.json(detail);
  });

  // The timeframes and aggregates of the documentation ("Pool OHLCV chart by Pool Address"); the
  // finest is the minute.
  const PERIOD_SECONDS: Record<string, Record<string, number>> = { minute: { 1: 60, 5: 300, 15: 900 }, hour: { 1: 3600, 4: 14_400, 12: 43_200 }, day: { 1: 86_400 } };
  router.get(`${COINGECKO_REST_BASE}/onchain/networks/:network/pools/:address/ohlcv/:timeframe`, guard, (req, res) => {
    const q = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : undefined);
    const byAggregate = PERIOD_SECONDS[String(req.params.timeframe)];
    const period = byAggregate?.[q('aggregate') ?? '1'];
    if (!period) return void res.status(400).json(cgError(400, 'Invalid timeframe or aggregate'));
    const token = q('token') ?? 'base';
    if (token !== 'base' && token !== 'quote') return void res.status(400).json(cgError(400, 'token must be base or quote'));
    // Without before_timestamp: up to now, the current period included.
    const before = q('before_timestamp') === undefined ? Number.POSITIVE_INFINITY : Number(q('before_timestamp'));
    const limit = Math.min(1000, Math.max(1, Number(q('limit') ?? 100) || 100));
    const pool = `${req.params.network}:${req.params.address}`;
    const ohlcvList = Number.isNaN(before) ? [] : deps.stream.ohlcv(pool, token, period, before, limit);
    const side = (address: string) => ({ address, name: '', symbol: '', coingecko_coin_id: null });
    res.json({ data: { id: randomUUID(), type: 'ohlcv_request_response', attributes: { ohlcv_list: ohlcvList } }, meta: { base: side(''), quote: side('') } });
  });

  router.get(`${COINGECKO_REST_BASE}/onchain/networks/:network/tokens/:address/top_holders`, guard, (req, res) => {
    const body = structuredClone(deps.topHolders);
    body.data.id = `${req.params.network}_${req.params.address}`;
    const holders = typeof req.query.holders === 'string' && /^\d+$/.test(req.query.holders) ? Number(req.query.holders) : undefined;
    if (holders !== undefined) body.data.attributes.holders = body.data.attributes.holders.slice(0, holders);
    res.json(body);
  });

  router.get(`${COINGECKO_REST_BASE}/coins/:platform/contract/:address`, guard, (req, res) => {
    const platform = String(req.params.platform);
    const address = String(req.params.address);
    const id = `sim-${address.slice(-8).toLowerCase()}`;
    res.json({
      id,
      symbol: id.slice(-4),
      name: `Simulated ${address.slice(0, 10)}`,
      asset_platform_id: platform,
      platforms: { [platform]: address },
      detail_platforms: { [platform]: { decimal_place: 18, contract_address: address } },
      contract_address: address,
      market_data: { current_price: { usd: 1 }, market_cap: { usd: 0 }, total_volume: { usd: 0 } },
      last_updated: new Date().toISOString(),
    });
  });

  router.post('/sim/coingecko/ws/drop', (req, res) => {
    const outageMs = Number(req.query.outage_ms ?? 0);
    res.json({ dropped: deps.stream.dropAll(Number.isFinite(outageMs) && outageMs > 0 ? Math.min(outageMs, 600_000) : 0) });
  });
  router.get('/sim/coingecko/ws/status', (_req, res) => void res.json(deps.stream.status()));
  router.put('/sim/coingecko/ws/refused/:pool', (req, res) => {
    deps.stream.refusePool(String(req.params.pool));
    res.json({ refused: String(req.params.pool) });
  });
  router.delete('/sim/coingecko/ws/refused/:pool', (req, res) => {
    deps.stream.acceptPool(String(req.params.pool));
    res.json({ accepted: String(req.params.pool) });
  });
  return router;
}
