/** What benchmarks and tests use in-process: the handler of price.quotes.v1 batches. */
export { quotesHandler, type QuotesHandlerDeps } from './quotes.handler';
