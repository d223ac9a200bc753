/** What benchmarks and tests use in-process: the handler of market.ticks.v1 batches. */
export { createTicksHandler, secondsCutOff, type TicksHandlerDeps } from './ticks.handler';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { klineAggregatorConfig } from './config';
