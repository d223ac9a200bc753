/** What benchmarks and tests use in-process: the app factory and its two route modules. */
export { createMarketGatewayApp, type MarketGatewayOptions } from './app';
export { klineModule, type KlineModule } from './kline/module';
export { priceModule } from './price/module';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { marketGatewayConfig } from './config';
