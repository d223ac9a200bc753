/** What benchmarks and tests use in-process: the check every parsed record passes before it is stored and published. */
export { normalizedTxCheck } from './tx-contract';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { chainParserConfig } from './config';
/** The handlers of both topics, driven in-process by the handler's tests. */
export { createParserHandlers, type ChainRawHandlerDeps } from './chain-raw.handler';
