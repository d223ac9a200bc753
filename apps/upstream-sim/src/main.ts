import { addHttpServer } from '@chainpipe/http';
import { runService } from '@chainpipe/runtime';
import { createUpstreamSimApp } from './app';
import { loadFixtureDocs } from './chain-nodes/load-fixtures';
import { buildChainNodes } from './chain-nodes/nodes';
import { upstreamSimConfig } from './config';
import { HeldRequests } from './faults';
import { FiatRatesSource } from './market/fiat-rates-source';
import { PoolsSource } from './market/pools-source';
import { QuotesSource } from './market/quotes-source';
import { StickyFaults } from './market/router';

runService('upstream-sim', upstreamSimConfig, (svc) => {
  const { config, logger, registry } = svc;
  const chainNodes = buildChainNodes(loadFixtureDocs(config.FIXTURES_DIR), { clientVersion: 'chainpipe-upstream-sim/0.1.0' });
  for (const [network, node] of chainNodes.nodes) logger.info({ msg: 'chain_node_ready', network, ...node.summary });
  for (const s of chainNodes.skipped) logger[s.expected ? 'debug' : 'warn']({ msg: 'fixture_skipped', file: s.source, reason: s.reason });

  const clock = { now: Date.now, random: Math.random };
  const market = {
    sources: { quotes: new QuotesSource(clock), fiatRates: new FiatRatesSource(clock), pools: new PoolsSource(config.FIXTURES_DIR, clock) },
    faults: new StickyFaults(),
  };
  logger.info({ msg: 'market_upstreams_ready', pools: market.sources.pools.size });

  const held = new HeldRequests(config.SIM_FAULT_HOLD_MS);
  const app = createUpstreamSimApp({
    logger,
    registry,
    chainNodes,
    market,
    held,
    holdMs: config.SIM_FAULT_HOLD_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    maxBatch: config.RPC_MAX_BATCH,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
  });
  addHttpServer(svc, app);
  // Registered after the server so it stops first: held requests would keep the server from closing.
  svc.serve({ name: 'held-requests', stop: async () => held.releaseAll() });
});
