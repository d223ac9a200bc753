import { listen } from '@chainpipe/http';
import { bootApp, runMain } from '@chainpipe/runtime';
import { createUpstreamSimApp } from './app';
import { loadFixtureDocs } from './chain-nodes/load-fixtures';
import { buildChainNodes } from './chain-nodes/nodes';
import { upstreamSimConfig } from './config';
import { HeldRequests } from './faults';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('upstream-sim', upstreamSimConfig);

  const chainNodes = buildChainNodes(loadFixtureDocs(config.FIXTURES_DIR), { clientVersion: 'chainpipe-upstream-sim/0.1.0' });
  for (const [network, node] of chainNodes.nodes) logger.info({ msg: 'chain_node_ready', network, ...node.summary });
  for (const s of chainNodes.skipped) logger[s.expected ? 'debug' : 'warn']({ msg: 'fixture_skipped', file: s.source, reason: s.reason });

  const held = new HeldRequests(config.SIM_FAULT_HOLD_MS);
  const app = createUpstreamSimApp({
    logger,
    registry,
    chainNodes,
    held,
    holdMs: config.SIM_FAULT_HOLD_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    maxBatch: config.RPC_MAX_BATCH,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
  });
  const http = await listen(app, config.PORT, config.HOST);
  lifecycle.add({ name: 'http', stop: () => http.close() });
  // Added last so it stops first: held requests would otherwise keep the server from closing.
  lifecycle.add({ name: 'held-requests', stop: async () => held.releaseAll() });

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', port: http.address.port, opsPort: ops.port, fixturesDir: config.FIXTURES_DIR });
});
