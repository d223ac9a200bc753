import { ThorchainAdapter } from '@chainpipe/aggregator';
import { NETWORKS, chainOriginsFromConfig } from '@chainpipe/chains';
import { EvmSender, OutgoingTransfers, signerFromConfig, type TransferChain } from '@chainpipe/custody';
import { addPostgres } from '@chainpipe/db';
import { OutgoingTransferRepository } from '@chainpipe/order-store';
import { periodicJob, runService, systemClock } from '@chainpipe/runtime';
import { orderExecutorConfig } from './config';
import { OrderExecutor } from './executor';
import { ThorchainForwarder } from './forwarders';

runService('order-executor', orderExecutorConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  const signer = signerFromConfig(config);
  const origins = chainOriginsFromConfig(config);
  // one sender per EVM chain type, on its mainnet (deposits are seen on the monitored mainnets)
  const chains = new Map<string, TransferChain>(
    NETWORKS.filter((n) => n.family === 'evm' && !n.testnet).map((n) => [n.chainType, new EvmSender({ url: origins.urlFor(n.network)!, chainId: n.chainId, timeoutMs: config.CHAIN_RPC_TIMEOUT_MS }, signer)]),
  );
  const confirmations = (chainType: string) => config.ORDER_EXECUTOR_CONFIRMATIONS[chainType as keyof typeof config.ORDER_EXECUTOR_CONFIRMATIONS] ?? config.ORDER_EXECUTOR_CONFIRMATIONS_DEFAULT;
  const transfers = new OutgoingTransfers({ store: new OutgoingTransferRepository(db), chain: (c) => chains.get(c), confirmations });
  const thorchain = new ThorchainAdapter({ baseUrl: config.THORNODE_API_URL, clientId: config.THORNODE_CLIENT_ID, timeoutMs: config.THORNODE_TIMEOUT_MS });
  const executor = new OrderExecutor({
    db,
    transfers,
    chain: (c) => chains.get(c),
    confirmations,
    forwarders: [new ThorchainForwarder(thorchain, { now: () => systemClock.now(), depositExpirySec: config.ORDER_EXECUTOR_DEPOSIT_EXPIRY_SEC })],
    logger,
    registry,
    batchSize: config.ORDER_EXECUTOR_BATCH,
    callTimeoutMs: config.THORNODE_TIMEOUT_MS,
  });
  // One pass at a time, the first at start (stored transfers are broadcast again before anything new is decided).
  svc.serve(periodicJob({ name: 'execute', intervalMs: config.ORDER_EXECUTOR_INTERVAL_MS, run: () => executor.pass(), logger, runAtStart: true }));
});
