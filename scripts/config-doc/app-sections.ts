/**
 * The config section every app of the port table validates at boot (its own; the service kit adds
 * baseConfig and the OPS_PORT default). Keyed by the port table's names, so a new app does not
 * typecheck until its section is here: the configuration reference and the deploy checks read it.
 */
import type { AppName, Section } from '@chainpipe/runtime';
import { aggregatorGatewayConfig } from '@chainpipe/aggregator-gateway';
import { ingestConfig } from '@chainpipe/chain-ingest';
import { chainParserConfig } from '@chainpipe/chain-parser';
import { klineAggregatorConfig } from '@chainpipe/kline-aggregator';
import { marketGatewayConfig } from '@chainpipe/market-gateway';
import { marketIngesterConfig } from '@chainpipe/market-ingester';
import { orderExecutorConfig } from '@chainpipe/order-executor';
import { orderTrackerConfig } from '@chainpipe/order-tracker';
import { pendingCompensatorConfig } from '@chainpipe/pending-compensator';
import { priceIngesterConfig } from '@chainpipe/price-ingester';
import { priceWriterConfig } from '@chainpipe/price-writer';
import { txGatewayConfig } from '@chainpipe/tx-gateway';
import { txMatcherConfig } from '@chainpipe/tx-matcher';
import { upstreamSimConfig } from '@chainpipe/upstream-sim';
import { webhookDispatcherConfig } from '@chainpipe/webhook-dispatcher';

export const APP_CONFIG_SECTIONS: Record<AppName, Section> = {
  'upstream-sim': upstreamSimConfig,
  'chain-ingest': ingestConfig,
  'chain-parser': chainParserConfig,
  'tx-gateway': txGatewayConfig,
  'tx-matcher': txMatcherConfig,
  'webhook-dispatcher': webhookDispatcherConfig,
  'pending-compensator': pendingCompensatorConfig,
  'market-ingester': marketIngesterConfig,
  'kline-aggregator': klineAggregatorConfig,
  'price-ingester': priceIngesterConfig,
  'price-writer': priceWriterConfig,
  'market-gateway': marketGatewayConfig,
  'aggregator-gateway': aggregatorGatewayConfig,
  'order-tracker': orderTrackerConfig,
  'order-executor': orderExecutorConfig,
};
