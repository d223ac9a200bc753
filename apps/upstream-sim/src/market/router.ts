import express, { type Router } from 'express';
import { Counter, type Registry } from 'prom-client';
import { sendError } from '@chainpipe/http';
import type { FiatRatesSource } from './fiat-rates-source';
import type { PoolsSource } from './pools-source';
import { QuotesSource, status } from './quotes-source';

export const MARKET_UPSTREAMS = ['cmc', 'oxr', 'geckoterminal', 'coingecko'] as const;
export type MarketUpstream = (typeof MARKET_UPSTREAMS)[number];

export interface MarketSources {
  quotes: QuotesSource;
  fiatRates: FiatRatesSource;
  pools: PoolsSource;
}

/**
 * An outage of one market upstream, switched on and off by tests through `/sim/faults`, since the
 * apps under test (not the test) make the upstream calls and cannot carry `x-sim-fault`.
 */
export class StickyFaults {
  private readonly active = new Map<MarketUpstream, 'http500' | 'error'>();

  set(upstream: MarketUpstream, kind: 'http500' | 'error'): void {
    this.active.set(upstream, kind);
  }

  clear(upstream?: MarketUpstream): void {
    if (upstream) this.active.delete(upstream);
    else this.active.clear();
  }

  get(upstream: MarketUpstream): 'http500' | 'error' | undefined {
    return this.active.get(upstream);
  }
}

const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);

/**
 * Market data upstreams, each under its own prefix with the provider's own paths:
 * - `/cmc/v2/cryptocurrency/quotes/latest` (CoinMarketCap quotes),
 * - `/oxr/api/latest.json` (Open Exchange Rates),
 * - `/geckoterminal/api/v2/networks/{network}/pools/{address}` (GeckoTerminal pool detail);
 * and the simulator's controls under `/sim`: pin a quote or a rate (`PUT /sim/cmc/quotes/{id}`
 * `{price}`, `PUT /sim/oxr/rates/{code}` `{rate}`), and switch an upstream outage on or off
 * (`PUT /sim/faults/{upstream}` `{kind: http500|error}`, `DELETE /sim/faults/{upstream}`).
 */
export function marketRouter(deps: { sources: MarketSources; faults: StickyFaults; registry: Registry }): Router {
  const router = express.Router();
  const served = new Counter({ name: 'chainpipe_upstream_sim_market_requests_total', help: 'Market upstream requests by upstream and outcome', labelNames: ['upstream', 'outcome'], registers: [deps.registry] });
  const { quotes, fiatRates, pools } = deps.sources;

  const faulted = (upstream: MarketUpstream, res: express.Response, providerError: () => unknown): boolean => {
    const kind = deps.faults.get(upstream);
    if (!kind) return false;
    served.inc({ upstream, outcome: `fault_${kind}` });
    if (kind === 'http500') res.status(500).type('text/plain').send('simulated upstream outage (http500)');
    else res.status(503).json(providerError());
    return true;
  };

  router.get('/cmc/v2/cryptocurrency/quotes/latest', (req, res) => {
    if (faulted('cmc', res, () => ({ status: status(Date.now(), 500, 'An internal server error occurred.') }))) return;
    const ids = list(req.query.id);
    const bad = ids.find((id) => !/^[1-9]\d{0,9}$/.test(id));
    if (!ids.length || bad !== undefined) {
      served.inc({ upstream: 'cmc', outcome: 'bad_request' });
      return res.status(400).json({ status: status(Date.now(), 400, ids.length ? `Invalid value for "id": "${String(bad).slice(0, 40)}"` : '"value" must contain at least one of [id, slug, symbol]') });
    }
    served.inc({ upstream: 'cmc', outcome: 'ok' });
    res.json(quotes.answer(ids));
  });

  router.get('/oxr/api/latest.json', (req, res) => {
    if (faulted('oxr', res, () => ({ error: true, status: 503, message: 'unavailable', description: 'simulated outage' }))) return;
    const base = typeof req.query.base === 'string' && req.query.base ? req.query.base.toUpperCase() : 'USD';
    const symbols = req.query.symbols !== undefined ? list(req.query.symbols).map((s) => s.toUpperCase()) : undefined;
    const answer = fiatRates.answer(base, symbols);
    if (!answer) {
      served.inc({ upstream: 'oxr', outcome: 'bad_request' });
      return res.status(400).json({ error: true, status: 400, message: 'invalid_base', description: `Invalid base currency: ${base.slice(0, 10)}` });
    }
    served.inc({ upstream: 'oxr', outcome: 'ok' });
    res.json(answer);
  });

  router.get('/geckoterminal/api/v2/networks/:network/pools/:address', (req, res) => {
    if (faulted('geckoterminal', res, () => ({ errors: [{ status: '503', title: 'Service Unavailable' }] }))) return;
    const detail = pools.detail(String(req.params.network), String(req.params.address));
    if (!detail) {
      served.inc({ upstream: 'geckoterminal', outcome: 'not_found' });
      return res.status(404).json({ errors: [{ status: '404', title: 'Not Found' }] });
    }
    served.inc({ upstream: 'geckoterminal', outcome: 'ok' });
    res.json(detail);
  });

  const json = express.json({ limit: '16kb' });
  const finiteBody = (field: string) => (req: express.Request, res: express.Response, next: express.NextFunction) => {
    const v = req.body?.[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return sendError(res, 400, `${field} must be a positive number`);
    next();
  };
  router.put('/sim/cmc/quotes/:id', json, finiteBody('price'), (req, res) => {
    quotes.pin(String(req.params.id), req.body.price);
    res.json({ pinned: String(req.params.id), price: req.body.price });
  });
  router.delete('/sim/cmc/quotes/:id', (req, res) => {
    quotes.unpin(String(req.params.id));
    res.json({ unpinned: String(req.params.id) });
  });
  router.put('/sim/oxr/rates/:code', json, finiteBody('rate'), (req, res) => {
    const code = String(req.params.code).toUpperCase();
    fiatRates.pin(code, req.body.rate);
    res.json({ pinned: code, rate: req.body.rate });
  });
  router.put('/sim/faults/:upstream', json, (req, res) => {
    const upstream = String(req.params.upstream) as MarketUpstream;
    const kind = req.body?.kind;
    if (!MARKET_UPSTREAMS.includes(upstream)) return sendError(res, 404, `unknown upstream; use one of ${MARKET_UPSTREAMS.join(', ')}`);
    if (kind !== 'http500' && kind !== 'error') return sendError(res, 400, 'kind must be http500 or error');
    deps.faults.set(upstream, kind);
    res.json({ upstream, kind });
  });
  router.delete('/sim/faults/:upstream', (req, res) => {
    const upstream = String(req.params.upstream) as MarketUpstream;
    if (!MARKET_UPSTREAMS.includes(upstream)) return sendError(res, 404, `unknown upstream; use one of ${MARKET_UPSTREAMS.join(', ')}`);
    deps.faults.clear(upstream);
    res.json({ upstream, kind: null });
  });
  return router;
}
