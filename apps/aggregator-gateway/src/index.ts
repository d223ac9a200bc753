/** What benchmarks and tests use in-process: the app factory and the quote-stream module. */
export { createAggregatorGatewayApp, type AggregatorGatewayOptions } from './app';
export { quotesModule, type QuotesModuleDeps } from './quotes/module';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { aggregatorGatewayConfig } from './config';
