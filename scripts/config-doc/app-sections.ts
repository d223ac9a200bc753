/**
 * The config section every app of the port table validates at boot (its own; the service kit adds
 * baseConfig and the OPS_PORT default). Keyed by the port table's names, so a new app does not
 * typecheck until its section is here: the configuration reference and the deploy checks read it.
 */
import type { AppName, Section } from '@chainpipe/runtime';
import { aggregatorGatewayConfig } from '../../apps/aggregator-gateway/src/config';
import { ingestConfig } from '../../apps/chain-ingest/src/config';
import { chainParserConfig } from '../../apps/chain-parser/src/config';
import { klineAggregatorConfig } from '../../apps/kline-aggregator/src/config';
import { marketGatewayConfig } from '../../apps/market-gateway/src/config';
import { marketIngesterConfig } from '../../apps/market-ingester/src/config';
import { orderExecutorConfig } from '../../apps/order-executor/src/config';
import { orderTrackerConfig } from '../../apps/order-tracker/src/config';
import { pendingCompensatorConfig } from '../../apps/pending-compensator/src/config';
import { priceIngesterConfig } from '../../apps/price-ingester/src/config';
import { priceWriterConfig } from '../../apps/price-writer/src/config';
import { txGatewayConfig } from '../../apps/tx-gateway/src/config';
import { txMatcherConfig } from '../../apps/tx-matcher/src/config';
import { upstreamSimConfig } from '../../apps/upstream-sim/src/config';
import { webhookDispatcherConfig } from '../../apps/webhook-dispatcher/src/config';

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
