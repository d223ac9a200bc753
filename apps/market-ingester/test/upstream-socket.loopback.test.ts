import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebSocketServer } from 'ws';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock, waitFor } from '@chainpipe/testing';
import { UpstreamSocket } from '../src/upstream-socket';

const logger = createLogger({ name: 'test', level: 'silent' });
const HOUR = 3_600_000;

/** A local upstream: counts connection attempts; `accept` decides whether the handshake completes. */
async function upstream(accept: boolean) {
  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true, autoPong: false });
  let attempts = 0;
  server.on('upgrade', (req, socket, head) => {
    attempts++;
    if (!accept) return socket.destroy();
    wss.handleUpgrade(req, socket, head, () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    attempts: () => attempts,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('UpstreamSocket timing on a manual clock', () => {
  it('reconnects at once after the first loss, then backs off 1, 2, 4, 4 s (doubling to the cap) while it keeps failing', async () => {
    const up = await upstream(false);
    const clock = new ManualClock();
    const socket = new UpstreamSocket({ index: 0, url: up.url, apiKey: 'k', pingMs: HOUR, reconnect: { initialMs: 1_000, maxMs: 4_000 }, onUpdate: () => undefined, logger, clock, random: () => 1 });
    try {
      socket.start();
      const waits: number[] = [];
      for (let attempt = 1; attempt <= 5; attempt++) {
        // the attempt fails on the socket (real I/O); its reconnect timer then joins the ping timer
        await waitFor(() => up.attempts() === attempt && clock.pendingTimers === 2, { what: `attempt ${attempt} failed and its reconnect scheduled`, intervalMs: 5 });
        const wait = clock.nextDueIn()!;
        waits.push(wait);
        if (wait > 0) {
          await clock.advance(wait - 1);
          expect(up.attempts(), 'no reconnect before its backoff ends').to.equal(attempt);
          await clock.advance(1);
        } else await clock.advance(0);
      }
      expect(waits).to.deep.equal([0, 1_000, 2_000, 4_000, 4_000]);
    } finally {
      await socket.stop();
      await up.close();
    }
  });

  it('drops a connection silent for more than two ping intervals, at the third ping, and reconnects at once', async () => {
    const up = await upstream(true);
    const clock = new ManualClock();
    const socket = new UpstreamSocket({ index: 0, url: up.url, apiKey: 'k', pingMs: 10_000, reconnect: { initialMs: 1_000, maxMs: 4_000 }, onUpdate: () => undefined, logger, clock });
    try {
      socket.start();
      await waitFor(() => socket.open, { what: 'connected' });
      await clock.advance(20_000);
      await new Promise((r) => setTimeout(r, 50));
      expect(socket.open, 'two silent intervals are tolerated').to.equal(true);
      await clock.advance(10_000);
      await waitFor(() => !socket.open, { what: 'dropped as silent' });
      await clock.advance(0);
      await waitFor(() => up.attempts() === 2 && socket.open, { what: 'reconnected without a wait' });
    } finally {
      await socket.stop();
      await up.close();
    }
  });
});
