export { storeBlock, storeLooseTransactions, type StoredTx, type StoreBlockInput, type StoreBlockResult, type StoreOptions } from './store';
export { StoreDbError, classifyStoreError, compactDbError, sqlState, type StoreFailure } from './errors';
export {
  DEFAULT_MAX_PARAMS_PER_STATEMENT,
  PG_MAX_BIND_PARAMS,
  TX_INSERT_COLUMNS,
  INDEX_INSERT_COLUMNS,
  chunkRows,
  indexRowValues,
  recordJson,
  rowsPerStatement,
  txRowValues,
  uniqueByHash,
  valuesPlaceholders,
  type IndexRowValues,
  type TxRowValues,
} from './rows';
