export { NO_BLOCK, storeBlock, storeBlocks, type PreviousTx, type StoredTx, type StoreBlockInput, type StoreBlockResult, type StoreOptions } from './store';
export { resolveStoredInputs } from './prevouts';
export { StoreDbError, classifyStoreError, compactDbError, sqlState, type StoreFailure } from './errors';
export {
  DEFAULT_MAX_PARAMS_PER_STATEMENT,
  PG_MAX_BIND_PARAMS,
  TX_INSERT_COLUMNS,
  INDEX_INSERT_COLUMNS,
  chunkRows,
  indexRowArrays,
  indexRowValues,
  tokenIndexRowValues,
  recordJson,
  rowsPerStatement,
  txRowArrays,
  txRowValues,
  uniqueByHash,
  valuesPlaceholders,
  type IndexRowValues,
  type TokenIndexRowValues,
  type TxRowValues,
} from './rows';
export { MonitoredAddressRepository, changeMessages, type AddressChange, type MonitoredRow } from './monitored-addresses';
export { AppConfigRepository, type AppConfigRow, type AppSwitches, type ConfigColumns, type WebhookAttempt, type WebhookAttemptFilter, type WebhookAttemptRow } from './app-configs';
export { DexPoolRepository, type DexPoolRef } from './dex-pools';
export { chainTxKey, chainTxMessage } from './messages';
export { markChecked, pendingTransactions, type PendingTx } from './pending';
export { PoolTrades, POOL_TRADES_CAPACITY } from './pool-trades';
export {
  TxQueryRepository,
  chainsSql,
  historySql,
  withChainKeys,
  type AddressKey,
  type ChainKeyRow,
  type HistoryFilters,
  type HistoryQuery,
  type TxQueries,
} from './transaction-queries';
