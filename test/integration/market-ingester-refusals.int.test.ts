import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { MarketTickMessage } from '@chainpipe/contracts';
import type { PoolRecord } from '@chainpipe/kline';
import { createLogger, systemClock } from '@chainpipe/runtime';
import { waitFor } from '@chainpipe/testing';
import { MarketIngester } from '../../apps/market-ingester/src/ingester';
import { UpstreamSocket } from '../../apps/market-ingester/src/upstream-socket';
import { OhlcvStreamServer, SIM_ERROR } from '../../apps/upstream-sim/src/market/ohlcv-stream';

/**
 * A `set_pools` the upstream refuses: the development stand-in of the OnchainOHLCV channel (its
 * real protocol, over a real socket) is told to refuse one pool; the ingester must not take it as
 * subscribed, must show it in its status and metric, keep asking with backoff, and subscribe it
 * once the stand-in accepts it, while the other pools of the same command stream all along.
 */
describe('market-ingester: a refused upstream subscription is retried and visible', () => {
  const logger = createLogger({ name: 'market-ingester-refusals-test', level: 'silent' });
  let stream: OhlcvStreamServer;
  let server: http.Server;
  let url: string;
  const pool = (id: number, address: string): PoolRecord =>
    ({ id, chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: address, token: 'base', dex_id: null, label: null, is_active: true, created_at: '', updated_at: '' }) as unknown as PoolRecord;
  const pools = [pool(1, '0xaaa1'), pool(2, '0xbbb2'), pool(3, '0xccc3')];

  before(async () => {
    stream = new OhlcvStreamServer({ logger, apiKey: 'k', tickMs: 50, maxSubscriptionsPerSocket: 100, pingMs: 30_000 });
    server = http.createServer();
    server.on('upgrade', (req, socket, head) => {
      if (!stream.upgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await stream.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps the refused pool out of the subscribed set, shows it, retries it with backoff and subscribes it once accepted', async () => {
    stream.refusePool('eth:0xbbb2');
    const registry = new Registry();
    const ticks: MarketTickMessage[] = [];
    const sockets: UpstreamSocket[] = [];
    const ingester = new MarketIngester({
      activePools: async () => pools,
      publish: async (messages) => void ticks.push(...messages.map((m) => m.value)),
      openSocket: (index, onUpdate) => {
        const socket = new UpstreamSocket({ index, url, apiKey: 'k', pingMs: 30_000, reconnect: { initialMs: 40, maxMs: 160 }, onUpdate, logger });
        socket.start();
        sockets.push(socket);
        return socket;
      },
      interval: '1s',
      subscriptionsPerSocket: 100,
      logger,
      registry,
      clock: systemClock,
      maxPendingTicks: 10_000,
      publishRetry: { initialMs: 40, maxMs: 160 },
      backfill: { fetchMinutes: async () => [], latestStoredMinutes: async () => new Map(), settleMs: 0 },
    });
    const refusedGauge = async () => (await registry.getSingleMetric('chainpipe_market_refused_subscriptions')!.get()).values[0]?.value;
    try {
      await ingester.sync();
      // Refused, then asked again on its own: the refusals in a row grow while the stand-in refuses.
      const seen = await waitFor(
        () => {
          const refused = ingester.status().refusedPools ?? [];
          return refused.length === 1 && refused[0].attempts >= 3 ? refused[0] : undefined;
        },
        { what: 'the refused pool listed with three refusals in a row' },
      );
      expect(seen).to.deep.include({ poolId: 2, networkId: 'eth', poolAddress: '0xbbb2', token: 'base', code: SIM_ERROR.poolRefused });
      expect(seen.message).to.include('eth:0xbbb2');
      expect(await refusedGauge(), 'the metric').to.equal(1);
      const status = ingester.status();
      expect(status.connected && status.channelConfirmed, 'the socket itself is fine').to.equal(true);
      // The stand-in holds the other two; their ticks arrive, none of the refused one's.
      const held = () => stream.status().sockets.flatMap((s) => s.pools).sort();
      expect(held()).to.deep.equal(['1s|base|eth:0xaaa1', '1s|base|eth:0xccc3']);
      await waitFor(() => ticks.some((t) => t.pool_id === 1) && ticks.some((t) => t.pool_id === 3), { what: 'ticks of the accepted pools' });
      expect(ticks.filter((t) => t.pool_id === 2)).to.have.length(0);

      stream.acceptPool('eth:0xbbb2');
      await waitFor(() => (ingester.status().refusedPools ?? []).length === 0 && held().length === 3, { what: 'the pool subscribed on a retry' });
      expect(held()).to.deep.equal(['1s|base|eth:0xaaa1', '1s|base|eth:0xbbb2', '1s|base|eth:0xccc3']);
      await waitFor(() => ticks.some((t) => t.pool_id === 2), { what: 'ticks of the pool once accepted' });
      expect(await refusedGauge()).to.equal(0);
    } finally {
      await ingester.stop();
    }
  });
});
