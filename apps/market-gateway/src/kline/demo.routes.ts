import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Response } from 'express';
import type { ApiRoutes } from '@chainpipe/http';
import { KLINE_DEMO_PREFIX } from './envelope';

const DEMO_PATH = KLINE_DEMO_PREFIX;
const TAGS = ['live chart page'];
/** Plain files beside this module: a compiled build must copy this folder beside the compiled module too. */
const DEMO_DIR = path.join(__dirname, 'demo');
/** TradingView Lightweight Charts' standalone bundle (the `LightweightCharts` global), from node_modules: no CDN. */
const CHART_BUNDLE = path.join(path.dirname(require.resolve('lightweight-charts/package.json')), 'dist/lightweight-charts.standalone.production.js');

/**
 * The page may load scripts, styles and connect (history and the WebSocket) only to this origin;
 * inline styles are the page's own and the chart library's. No inline script, no framing.
 */
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The live chart page (`GET /kline/demo`) and its scripts: a plain page that lists the active
 * pools and draws candles from the history endpoint and the candlestick WebSocket. Public like
 * `/docs`: the page holds no data; the key is given in the browser and every call the page makes
 * needs it. Files are read once at boot, so a missing one fails the start, not a request.
 */
function readAsset(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`live chart page: cannot read ${file} (${(err as Error).message}); a build that runs this module elsewhere must copy apps/market-gateway/src/kline/demo/ beside it`);
  }
}

export function demoRoutes(api: ApiRoutes): void {
  const page = readAsset(path.join(DEMO_DIR, 'index.html'));
  const scripts: { file: string; body: string; summary: string; description: string; cache: string }[] = [
    {
      file: 'lightweight-charts.js',
      body: readAsset(CHART_BUNDLE),
      summary: 'Chart library of the live chart page',
      description: "TradingView Lightweight Charts' standalone production bundle, served from the gateway's own packages.",
      cache: 'public, max-age=86400',
    },
    {
      file: 'candles.js',
      body: readAsset(path.join(DEMO_DIR, 'candles.js')),
      summary: 'Candle logic of the live chart page',
      description: 'Merging history and pushes by open_time, history queries, reconnect delay (no DOM).',
      cache: 'no-cache',
    },
    {
      file: 'page.js',
      body: readAsset(path.join(DEMO_DIR, 'page.js')),
      summary: 'Script of the live chart page',
      description: 'Pools, history, the WebSocket subscription, reconnects with gap fill.',
      cache: 'no-cache',
    },
  ];
  const common = (res: Response) => res.set({ 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });

  api.route(
    {
      method: 'get',
      path: DEMO_PATH,
      summary: 'Live chart page',
      description:
        'An HTML page that lists the active pools and draws the candles of one pool and interval: history from GET /kline/api/v1/kline/ohlcv, then live from the candlestick WebSocket (re-subscribed with a gap fill after a reconnect). Needs no key itself: the page asks for one (or reads `#key=…` from its URL fragment, which never reaches the server) and sends it with each call it makes; the WebSocket gets it as the subprotocol `x-api-key.<key>`.',
      tags: TAGS,
      auth: 'none',
      ok: { data: { type: 'string' }, bare: true, mediaType: 'text/html', description: 'the page', example: '<!doctype html>…' },
    },
    (_req, res) => {
      common(res).set({ 'Content-Security-Policy': PAGE_CSP, 'Cache-Control': 'no-cache' }).type('text/html').send(page);
    },
  );

  for (const s of scripts) {
    api.route(
      {
        method: 'get',
        path: `${DEMO_PATH}/${s.file}`,
        summary: s.summary,
        description: s.description,
        tags: TAGS,
        auth: 'none',
        ok: { data: { type: 'string' }, bare: true, mediaType: 'application/javascript', description: 'the script' },
      },
      (_req, res) => {
        common(res).set('Cache-Control', s.cache).type('application/javascript').send(s.body);
      },
    );
  }
}
