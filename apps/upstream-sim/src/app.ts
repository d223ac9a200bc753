import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { createHttpApp, finishHttpApp, type EnvelopeStyle } from '@chainpipe/http';
import type { Logger } from '@chainpipe/runtime';
import { Counter } from 'prom-client';
import { chainNodesRouter, type ChainNodesRouterDeps } from './chain-nodes/router';
import { signerRouter } from './custody/signer-router';
import type { ChainNodes } from './chain-nodes/nodes';
import { faultMiddleware, type HeldRequests } from './faults';
import { coingeckoRouter, type CoingeckoDeps } from './market/coingecko-router';
import { marketRouter, type MarketSources, type StickyFaults } from './market/router';
import { changenowRouter } from './swaps/changenow-router';
import { payinChainOf } from './swaps/payin-chains';
import { thornodeRouter } from './swaps/thornode-router';
import type { ThorchainSim } from './swaps/thorchain-sim';

/** The simulator's own errors (unknown network or route, bad fault header): `{error: {code, message}}`. */
export const simEnvelope: EnvelopeStyle = {
  name: 'upstream-sim',
  ok: (data) => data,
  error: (_status, code, message) => ({ error: { code, message } }),
};

export interface UpstreamSimDeps {
  logger: Logger;
  registry: Registry;
  chainNodes: ChainNodes;
  market: { sources: MarketSources; faults: StickyFaults };
  coingecko: CoingeckoDeps;
  held: HeldRequests;
  holdMs: number;
  bodyLimitBytes: number;
  maxBatch: number;
  timeoutMs: number;
  /** Key the swap provider stand-ins require (empty: any non-empty key). */
  swapApiKey: string;
  /** Time between two statuses of a ChangeNOW exchange after its payin. */
  changenowStepMs?: number;
  /** The simulated THORChain (vaults, routers, the inbounds it observed on the chains). */
  thorchain: ThorchainSim;
  /** Keys and token of the signing-service stand-in. */
  signer: { mnemonic: string; token: string };
  /** Reorganises a simulated chain's head (the block producer's `reorg`), for `POST /sim/chain/{network}/reorg`. */
  reorg?: ChainNodesRouterDeps['reorg'];
}

/**
 * One express app for every simulated upstream, a router each (chain nodes; market data under
 * their providers' prefixes; the OnchainOHLCV stream takes the upgrades of its path). Faults
 * apply to all of them.
 */
export function createUpstreamSimApp(deps: UpstreamSimDeps): Express {
  // The request deadline must not answer a request the timeout fault is holding.
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry, defaultEnvelope: simEnvelope, timeoutMs: Math.max(deps.timeoutMs, deps.holdMs + 1_000) });
  const faults = new Counter({ name: 'chainpipe_upstream_sim_faults_total', help: 'Requests failed on purpose by x-sim-fault', labelNames: ['kind'], registers: [deps.registry] });
  app.use(faultMiddleware(deps.held, (kind) => faults.inc({ kind })));
  app.use(chainNodesRouter({ chainNodes: deps.chainNodes, logger: deps.logger, registry: deps.registry, bodyLimitBytes: deps.bodyLimitBytes, maxBatch: deps.maxBatch, reorg: deps.reorg }));
  app.use(marketRouter({ ...deps.market, registry: deps.registry }));
  app.use(coingeckoRouter(deps.coingecko));
  app.use(changenowRouter({ quotes: deps.market.sources.quotes, apiKey: deps.swapApiKey, now: Date.now, chain: payinChainOf(deps.chainNodes), stepMs: deps.changenowStepMs }));
  app.use(thornodeRouter({ thorchain: deps.thorchain, now: Date.now }));
  app.use(signerRouter(deps.signer));
  finishHttpApp(app, deps.logger);
  return app;
}
