/**
 * What benchmarks and tests use in-process: the app factory and its route modules, the history query's request
 * normalization (the SQL it runs is libs/tx-store's TxQueryRepository) and the WebSocket push path.
 */
export { createTxGatewayApp } from './app';
export { txGatewayModules } from './modules';
export { normalizeMultiChain, normalizeSearch, type HistoryQuery } from './queries/request';
export { transactionFrame } from './push/push.handler';
export { ConnectionCap } from '@chainpipe/redis';
export { ResendStore } from './push/resend-store';
export { WsHub } from './push/ws-hub';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { txGatewayConfig } from './config';
