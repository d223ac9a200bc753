import { ChangeNowAdapter, ThorchainAdapter } from '@chainpipe/aggregator';
import { chainOriginsFromConfig } from '@chainpipe/chains';
import { GasStation, OutgoingTransfers, checkSignerOwnsDepositKeys, depositAddressesFrom, originTxLookup, sendersByChainType, signerFromConfig, stationChainTypesWithOrigin, stationKeyOf, stationWarnBelow } from '@chainpipe/custody';
import { addPostgres } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository } from '@chainpipe/order-store';
import { periodicJob, runService, systemClock } from '@chainpipe/runtime';
import { orderExecutorConfig } from './config';
import { DepositOnChain } from './deposit-check';
import { OrderExecutor } from './executor';
import { ChangeNowForwarder, ThorchainForwarder } from './forwarders';
import { GasStationWatch } from './gas-station-watch';
import { RefundJob } from './refunds';

runService('order-executor', orderExecutorConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  const signer = signerFromConfig(config);
  // the addresses the gateway hands out must be the signer's: refused at boot otherwise
  await checkSignerOwnsDepositKeys(signer, depositAddressesFrom(config));
  const origins = chainOriginsFromConfig(config);
  // one sender per chain type (EVM chains, Bitcoin, Solana, Tron), on its mainnet (deposits are seen on the monitored mainnets)
  const { evm, tron, all: senders } = sendersByChainType(origins, signer, config);
  const confirmations = (chainType: string) => config.ORDER_EXECUTOR_CONFIRMATIONS[chainType as keyof typeof config.ORDER_EXECUTOR_CONFIRMATIONS] ?? config.ORDER_EXECUTOR_CONFIRMATIONS_DEFAULT;
  const store = new OutgoingTransferRepository(db);
  const transfers = new OutgoingTransfers({ store, chain: senders, confirmations });
  // the gas station: the reserved key that tops up token deposit addresses (docs/operations.md, "The gas station"), on the EVM chains and Tron
  const station = await stationKeyOf(signer);
  logger.info({ msg: 'gas_station', address: station.addresses.evm, tronAddress: station.addresses.tvm, index: station.index });
  const orders = new OrderRepository(db);
  const gas = new GasStation({ transfers, store, chain: (chainType) => evm(chainType) ?? tron(chainType), station, recordTopUp: async (row) => void (await orders.recordGasTopUp(row)) });
  const thorchain = new ThorchainAdapter({ baseUrl: config.THORNODE_API_URL, clientId: config.THORNODE_CLIENT_ID, timeoutMs: config.THORNODE_TIMEOUT_MS });
  const changenow = new ChangeNowAdapter({ baseUrl: config.CHANGENOW_API_URL, apiKey: config.CHANGENOW_API_KEY, timeoutMs: config.CHANGENOW_TIMEOUT_MS, depositWindowMs: config.CHANGENOW_DEPOSIT_WINDOW_MS });
  // every deposit read from the chain's own node before its funds move (docs/decisions.md#d161)
  const deposits = new DepositOnChain({ db, chainTx: originTxLookup(origins, config.CHAIN_RPC_TIMEOUT_MS) });
  const executor = new OrderExecutor({
    db,
    transfers,
    chain: senders,
    deposits,
    gas,
    confirmations,
    forwarders: [new ThorchainForwarder(thorchain, { now: () => systemClock.now(), depositExpirySec: config.ORDER_EXECUTOR_DEPOSIT_EXPIRY_SEC }), new ChangeNowForwarder(changenow)],
    logger,
    registry,
    batchSize: config.ORDER_EXECUTOR_BATCH,
    callTimeoutMs: Math.max(config.THORNODE_TIMEOUT_MS, config.CHANGENOW_TIMEOUT_MS),
  });
  // One pass at a time, the first at start (stored transfers are broadcast again before anything new is decided).
  svc.serve(periodicJob({ name: 'execute', intervalMs: config.ORDER_EXECUTOR_INTERVAL_MS, run: () => executor.pass(), logger, runAtStart: true }));
  // Refunds of failed swaps and of ManualReview orders an operator resolved so (each through the same outgoing transfers).
  const refunds = new RefundJob({ db, transfers, chains: senders, deposits, gas, confirmations, logger, registry, batchSize: config.ORDER_EXECUTOR_BATCH });
  svc.serve(periodicJob({ name: 'refunds', intervalMs: config.ORDER_EXECUTOR_INTERVAL_MS, run: () => refunds.run(), logger, runAtStart: true }));
  // the station's balance for the operator who funds it (gauge, low-balance warning)
  const watch = new GasStationWatch({ station: gas, chainTypes: stationChainTypesWithOrigin(origins), warnBelow: stationWarnBelow(config), logger, registry });
  svc.serve(periodicJob({ name: 'gas_station', intervalMs: config.GAS_STATION_CHECK_INTERVAL_MS, run: () => watch.check(), logger, runAtStart: true }));
});
