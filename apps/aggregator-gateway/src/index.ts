/** What benchmarks and tests use in-process: the app factory and the quote-stream module. */
export { createAggregatorGatewayApp, type AggregatorGatewayOptions } from './app';
export { quotesModule, type QuotesModuleDeps } from './quotes/module';
