import { expect } from 'chai';
import { ConfigError, baseConfig, loadConfig, serviceSection, type Section } from '@chainpipe/runtime';
import { developmentSimulatorBase, simulatorUpstreamEnv } from '@chainpipe/testing';
import { aggregatorGatewayConfig } from '../../apps/aggregator-gateway/src/config';
import { marketGatewayConfig } from '../../apps/market-gateway/src/config';
import { marketIngesterConfig } from '../../apps/market-ingester/src/config';
import { orderExecutorConfig } from '../../apps/order-executor/src/config';
import { orderTrackerConfig } from '../../apps/order-tracker/src/config';
import { priceIngesterConfig } from '../../apps/price-ingester/src/config';

/**
 * No app has a default for a third-party upstream: started without one, it stops at boot with a
 * message naming each missing variable. The lists are the upstreams each app talks to (docs/configuration.md); chain origins, a rule across two variables, are tested in libs/chains.
 */
describe('upstream configuration is required', () => {
  const cases: { app: string; section: Section; upstreams: string[] }[] = [
    { app: 'market-gateway', section: marketGatewayConfig, upstreams: ['POOL_UPSTREAM_URL', 'KLINE_MARKET_API_URL', 'MARKET_API_KEY'] },
    { app: 'market-ingester', section: marketIngesterConfig, upstreams: ['MARKET_WS_URL', 'KLINE_MARKET_API_URL', 'MARKET_API_KEY'] },
    { app: 'price-ingester', section: priceIngesterConfig, upstreams: ['QUOTES_SOURCE_URL', 'QUOTES_SOURCE_API_KEY', 'FIAT_RATES_SOURCE_URL', 'FIAT_RATES_APP_ID'] },
    { app: 'aggregator-gateway', section: aggregatorGatewayConfig, upstreams: ['CHANGENOW_API_URL', 'CHANGENOW_API_KEY', 'THORNODE_API_URL'] },
    { app: 'order-tracker', section: orderTrackerConfig, upstreams: ['CHANGENOW_API_URL', 'CHANGENOW_API_KEY', 'THORNODE_API_URL'] },
    { app: 'order-executor', section: orderExecutorConfig, upstreams: ['CHANGENOW_API_URL', 'CHANGENOW_API_KEY', 'THORNODE_API_URL'] },
  ];
  const problemsOf = (section: Section, env: Record<string, string>): string[] => {
    try {
      loadConfig(section, env);
      return [];
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
  };

  for (const { app, section, upstreams } of cases) {
    const full = { ...baseConfig, ...serviceSection(app, section) };

    it(`${app}: refuses to boot without ${upstreams.join(', ')}, naming each`, () => {
      const problems = problemsOf(full, {});
      for (const name of upstreams) expect(problems.some((p) => p.startsWith(`${name} is required`)), `${name} named in:\n${problems.join('\n')}`).to.equal(true);
      // Not even one pointing at the development simulator.
      expect(problems.join('\n')).to.not.include('127.0.0.1:8090');
    });

    it(`${app}: its upstream configuration is complete with the development values`, () => {
      const problems = problemsOf(full, simulatorUpstreamEnv(developmentSimulatorBase()));
      for (const name of upstreams) expect(problems.filter((p) => p.startsWith(`${name} `))).to.deep.equal([]);
    });
  }

  it('an upstream URL that is not one is refused at boot', () => {
    const problems = problemsOf(marketGatewayConfig, { ...simulatorUpstreamEnv(developmentSimulatorBase()), POOL_UPSTREAM_URL: 'api.geckoterminal.com/api/v2' });
    expect(problems.some((p) => p.startsWith('POOL_UPSTREAM_URL must be a URL'))).to.equal(true);
  });
});
