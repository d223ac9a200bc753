import { addHttpServer } from '@chainpipe/http';
import { periodicJob, runService, systemClock } from '@chainpipe/runtime';
import { createUpstreamSimApp } from './app';
import { loadFixtureDocs } from './chain-nodes/load-fixtures';
import { BlockProducer } from './chain-nodes/block-producer';
import { fundedBitcoinAddresses } from './chain-nodes/bitcoin-ledger';
import { fundedAccounts, GWEI } from './chain-nodes/evm-ledger';
import { buildChainNodes } from './chain-nodes/nodes';
import { fundedSolanaAccounts } from './chain-nodes/solana-ledger';
import { fundedTronAccounts } from './chain-nodes/tron-ledger';
import { upstreamSimConfig } from './config';
import { HeldRequests } from './faults';
import { loadTopHolders } from './market/coingecko-router';
import { OhlcvStreamServer } from './market/ohlcv-stream';
import { FiatRatesSource } from './market/fiat-rates-source';
import { PoolsSource } from './market/pools-source';
import { QuotesSource } from './market/quotes-source';
import { StickyFaults } from './market/router';
import { ThorchainSim } from './swaps/thorchain-sim';

runService('upstream-sim', upstreamSimConfig, (svc) => {
  const { config, logger, registry } = svc;
  const chainNodes = buildChainNodes(loadFixtureDocs(config.FIXTURES_DIR), {
    clientVersion: 'chainpipe-upstream-sim/0.1.0',
    ledger: { baseFeeWei: BigInt(config.SIM_BASE_FEE_GWEI) * GWEI, funded: fundedAccounts(config.SIM_FUNDED_ACCOUNTS) },
    bitcoin: { feeRateSatVb: BigInt(config.SIM_BITCOIN_FEE_RATE_SAT_VB), funded: fundedBitcoinAddresses(config.SIM_FUNDED_BITCOIN_ADDRESSES) },
    solanaLedger: { funded: fundedSolanaAccounts(config.SIM_FUNDED_ACCOUNTS) },
    tronLedger: { funded: fundedTronAccounts(config.SIM_FUNDED_TRON_ADDRESSES), now: () => systemClock.now() },
  });
  for (const [network, node] of chainNodes.nodes) logger.info({ msg: 'chain_node_ready', network, ...node.summary });
  for (const s of chainNodes.skipped) logger[s.expected ? 'debug' : 'warn']({ msg: 'fixture_skipped', file: s.source, reason: s.reason });

  const drivers = { clock: systemClock, random: Math.random };
  const market = {
    sources: { quotes: new QuotesSource(drivers), fiatRates: new FiatRatesSource(drivers), pools: new PoolsSource(config.FIXTURES_DIR, drivers) },
    faults: new StickyFaults(),
  };
  logger.info({ msg: 'market_upstreams_ready', pools: market.sources.pools.size });

  const stream = new OhlcvStreamServer({
    logger,
    apiKey: config.SIM_COINGECKO_API_KEY,
    tickMs: config.SIM_OHLCV_TICK_MS,
    maxSubscriptionsPerSocket: config.SIM_OHLCV_MAX_SUBSCRIPTIONS,
    pingMs: config.SIM_OHLCV_PING_MS,
  });
  const coingecko = { pools: market.sources.pools, topHolders: loadTopHolders(config.FIXTURES_DIR), faults: market.faults, stream, apiKey: config.SIM_COINGECKO_API_KEY };

  // THORChain watches its vaults (and routers) on the simulated chains (EVM, Bitcoin); the routers run as code there
  const thorchain = new ThorchainSim({ quotes: market.sources.quotes, now: () => systemClock.now(), swapMs: config.SIM_THORCHAIN_SWAP_MS });
  for (const node of chainNodes.nodes.values()) {
    const router = node.ledger && thorchain.routerContract(node.network.network);
    if (router) node.ledger!.deploy(router.address, router.contract);
  }

  const producer = new BlockProducer({
    ledgers: [...chainNodes.nodes.values()].flatMap((n) => [n.ledger, n.bitcoinLedger, n.solanaLedger, n.tronLedger].filter((l) => l !== undefined)),
    logger,
    target: config.SIM_STREAM_URL ? { url: config.SIM_STREAM_URL, secret: config.STREAM_SECRET } : undefined,
    nowSec: () => Math.floor(systemClock.now() / 1000),
    onBlock: (network, block, receipts) => thorchain.observeBlock(network, block, receipts),
    randomReorgs: { chance: config.SIM_REORG_PERCENT / 100, maxDepth: config.SIM_REORG_MAX_DEPTH, random: drivers.random },
  });

  const held = new HeldRequests(config.SIM_FAULT_HOLD_MS);
  const app = createUpstreamSimApp({
    logger,
    registry,
    chainNodes,
    market,
    coingecko,
    held,
    holdMs: config.SIM_FAULT_HOLD_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    maxBatch: config.RPC_MAX_BATCH,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    swapApiKey: config.SIM_CHANGENOW_API_KEY,
    changenowStepMs: config.SIM_CHANGENOW_STEP_MS,
    thorchain,
    signer: { mnemonic: config.SIM_SIGNER_MNEMONIC, token: config.SIM_SIGNER_TOKEN },
    reorg: (network, depth, opts) => producer.reorg(network, depth, opts),
  });
  const http = addHttpServer(svc, app);
  // The OnchainOHLCV stream takes the upgrades of its path; it closes its sockets before the
  // server stops, since open streams would keep the server from closing.
  http.upgrade(stream.upgrade);
  svc.serve({ name: 'ohlcv-stream', stop: () => stream.close() });
  if (config.SIM_THORCHAIN_CHURN_MS > 0) svc.serve(periodicJob({ name: 'thorchain-churn', intervalMs: config.SIM_THORCHAIN_CHURN_MS, run: async () => void logger.info({ msg: 'sim_thorchain_churn', vaults: thorchain.churn() }), logger }));
  if (config.SIM_THORCHAIN_GAS_MS > 0) svc.serve(periodicJob({ name: 'thorchain-gas', intervalMs: config.SIM_THORCHAIN_GAS_MS, run: async () => thorchain.moveGas(drivers.random), logger }));
  svc.serve(periodicJob({ name: 'block-producer', intervalMs: config.SIM_BLOCK_MS, run: () => producer.tick(), logger }));
  // Registered after the server so it stops first: held requests would keep the server from closing.
  svc.serve({ name: 'held-requests', stop: async () => held.releaseAll() });
});
