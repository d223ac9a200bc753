/** What benchmarks and tests use in-process: the handler of price.quotes.v1 batches. */
export { quotesHandler, type QuotesHandlerDeps } from './quotes.handler';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { priceWriterConfig } from './config';
