import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { createRedis } from '@chainpipe/redis';
import { routeUpgrades } from '@chainpipe/http';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock, waitFor } from '@chainpipe/testing';
import { ResendStore } from '../src/push/resend-store';
import { WsHub, resendIsDue } from '../src/push/ws-hub';

describe('WebSocket hub timing', () => {
  describe('resendIsDue', () => {
    const base = { now: 100_000, pushedAt: 40_000, intervalMs: 10_000, windowSeconds: 60 };

    it('is due once the ack resend interval has passed since the last send, not a millisecond before', () => {
      expect(resendIsDue({ ...base, lastSentAt: 90_001 })).to.equal(false);
      expect(resendIsDue({ ...base, lastSentAt: 90_000 })).to.equal(true);
    });

    it('never for a push the connection was not sent, nor for one older than its resend window', () => {
      expect(resendIsDue({ ...base, lastSentAt: undefined })).to.equal(false);
      expect(resendIsDue({ ...base, lastSentAt: 0, pushedAt: 39_999 })).to.equal(false);
    });
  });

  describe('keep-alive on a manual clock', () => {
    const clock = new ManualClock(1_700_000_000_000);
    // The store is never reached: the clients ask for no resend window (X-ResendDuration: 0).
    const redis = createRedis({ url: 'redis://127.0.0.1:6379', extra: { lazyConnect: true } });
    const hub = new WsHub(
      {
        resolveKey: async (token) => (token === 'key' ? { appId: 'app', keyId: 'k1' } : undefined),
        store: new ResendStore(redis, { retentionSeconds: 600 }),
        // Two connections of one key, far below any cap: not what this test times.
        cap: { acquire: async () => true, release: async () => undefined, renew: async () => undefined },
        resendIntervalSeconds: async () => 60,
        lookupTx: async () => undefined,
        logger: createLogger({ name: 'test', level: 'silent' }),
        registry: new Registry(),
        clock,
      },
      { maxConnectionsPerKey: 10, maxBufferedBytes: 1 << 20, pingIntervalMs: 30_000, defaultResendSeconds: 0, retentionSeconds: 600, maxMessageBytes: 65_536 },
    );
    const server = http.createServer();
    let url = '';

    before(async () => {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      routeUpgrades(server, [hub.upgrade]);
      url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/tx/api/v1/transaction/ws`;
    });

    after(async () => {
      await hub.close();
      server.close();
      redis.disconnect();
    });

    const open = async (autoPong: boolean) => {
      const ws = new WebSocket(url, { headers: { 'x-api-key': 'key', 'x-resendduration': '0' }, autoPong });
      const pings: number[] = [];
      const frames: Array<{ type: string; time: number }> = [];
      ws.on('ping', () => pings.push(pings.length));
      ws.on('message', (data) => frames.push(JSON.parse(String(data))));
      let closed = false;
      ws.on('close', () => (closed = true));
      await waitFor(() => frames.some((f) => f.type === 'connected'), { what: 'connected frame' });
      return { ws, pings, frames, closed: () => closed };
    };

    it('stamps frames with the clock, pings every pingIntervalMs, and cuts a client that missed a ping at the next one', async () => {
      const live = await open(true);
      const dead = await open(false);
      expect(live.frames[0].time).to.equal(clock.now());
      expect(hub.connectionCount).to.equal(2);

      await clock.advance(29_999);
      await new Promise((r) => setTimeout(r, 50));
      expect(live.pings.length + dead.pings.length, 'no ping before the interval').to.equal(0);

      await clock.advance(1);
      await waitFor(() => live.pings.length === 1 && dead.pings.length === 1, { what: 'first ping on both' });
      // the live client's pong is on its way: give the socket a moment, no clock time
      await new Promise((r) => setTimeout(r, 50));
      expect(hub.connectionCount, 'a missed pong is forgiven until the next ping').to.equal(2);

      await clock.advance(30_000);
      await waitFor(() => dead.closed(), { what: 'the silent client cut off' });
      await waitFor(() => live.pings.length === 2, { what: 'second ping to the live client' });
      expect(live.closed()).to.equal(false);
      expect(hub.connectionCount).to.equal(1);
      live.ws.close();
    });
  });
});
