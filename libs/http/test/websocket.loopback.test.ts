import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import WebSocket, { WebSocketServer } from 'ws';
import { ManualClock, waitFor } from '@chainpipe/testing';
import { WsConnectionSet, refuseUpgrade, routeUpgrades, type WsCutReason, type WsPeer } from '../src/websocket';

/** Reaches into a `ws` client's socket to stop reading, as a stalled client does. */
const rawSocket = (ws: WebSocket) => (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;

describe('WebSocket connection kit', () => {
  const clock = new ManualClock(1_700_000_000_000);
  const cuts: { name: string; reason: WsCutReason }[] = [];
  const removed: string[] = [];
  let set: WsConnectionSet<WsPeer & { name: string }>;
  let server: http.Server;
  let base = '';
  const clients: WebSocket[] = [];

  beforeEach(async () => {
    cuts.length = 0;
    removed.length = 0;
    set = new WsConnectionSet({
      pingIntervalMs: 30_000,
      maxBufferedBytes: 64 * 1024,
      clock,
      onRemove: (c) => removed.push(c.name),
      onCut: (c, reason) => cuts.push({ name: c.name, reason }),
    });
    set.start();
    const wss = new WebSocketServer({ noServer: true });
    server = http.createServer();
    routeUpgrades(server, [
      (req, socket, head) => {
        const url = new URL(req.url ?? '/', 'http://test');
        if (url.pathname !== '/ws') return false;
        if (!url.searchParams.get('name')) {
          refuseUpgrade(socket, 401, { code: 401, msg: 'who are you', data: null }, { 'Retry-After': '1' });
          return true;
        }
        wss.handleUpgrade(req, socket, head, (ws) => set.add({ ws, name: url.searchParams.get('name')! }));
        return true;
      },
    ]);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.terminate();
    await set.closeAll(100);
    server.close();
  });

  const connect = async (name: string, opts: { autoPong?: boolean } = {}) => {
    const ws = new WebSocket(`${base}/ws?name=${name}`, { autoPong: opts.autoPong ?? true });
    clients.push(ws);
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => [...set].some((c) => c.name === name), { what: `${name} in the set` });
    return ws;
  };
  const peer = (name: string) => [...set].find((c) => c.name === name)!;

  /** The raw HTTP answer to an upgrade request on `path`. */
  const refusal = (path: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.request(`${base.replace('ws', 'http')}${path}`, { headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });

  it('refuses an upgrade nobody routes with 404, and a handler refusal with its status, headers and JSON body', async () => {
    const missing = await refusal('/elsewhere?x=1');
    expect(missing.status).to.equal(404);
    expect(JSON.parse(missing.body)).to.deep.equal({ code: 404, msg: 'no WebSocket endpoint at /elsewhere', data: null });
    const refused = await refusal('/ws');
    expect([refused.status, refused.headers['retry-after'], refused.headers['content-type']]).to.deep.equal([401, '1', 'application/json']);
    expect(JSON.parse(refused.body)).to.deep.equal({ code: 401, msg: 'who are you', data: null });
  });

  it('cuts off a client that stopped reading once its backlog would pass the bound; a reading client gets every frame', async () => {
    const slow = await connect('slow');
    const fast = await connect('fast');
    let got = 0;
    fast.on('message', () => (got += 1));
    const closed = new Promise((r) => slow.once('close', r));
    rawSocket(slow).pause();
    const frame = 'x'.repeat(16 * 1024);
    let sent = 0;
    // The kernel buffers take some first; then the server's backlog grows until the bound.
    for (let i = 0; i < 2_000 && set.has(peer('slow')); i++) {
      set.send(peer('slow'), frame);
      if (set.send(peer('fast'), frame)) sent += 1;
      await new Promise((r) => setImmediate(r));
    }
    expect(cuts).to.deep.equal([{ name: 'slow', reason: 'slow' }]);
    expect(removed).to.deep.equal(['slow']);
    expect(set.size).to.equal(1);
    rawSocket(slow).resume();
    await closed;
    await waitFor(() => got === sent, { what: `every frame to the reading client (${got}/${sent})` });
  });

  it('writes a backlog a hundred times the bound at the pace the client reads, with room left for live frames; a stalled client is cut by keep-alive, which ends its backlog', async () => {
    const reader = await connect('reader');
    let got = 0;
    reader.on('message', () => (got += 1));
    rawSocket(reader).pause();
    const frame = 'y'.repeat(16 * 1024);
    const backlog = async (conn: WsPeer & { name: string }, frames: number) => {
      let sent = 0;
      for (let i = 0; i < frames; i++) {
        if (!(await set.roomForBacklog(conn))) break;
        if (set.send(conn, frame)) sent += 1;
      }
      return sent;
    };
    const writing = backlog(peer('reader'), 400);
    await new Promise((r) => setTimeout(r, 200));
    // Paced: the server holds at most a quarter of the bound and one frame while the client does not read.
    expect(peer('reader').ws.bufferedAmount).to.be.at.most(16 * 1024 + 16 * 1024);
    expect(set.send(peer('reader'), 'live'), 'a live frame still fits').to.equal(true);
    rawSocket(reader).resume();
    expect(await writing).to.equal(400);
    await waitFor(() => got === 401, { what: `every frame read (${got}/401)` });
    expect(cuts).to.deep.equal([]);

    const stalled = await connect('stalled');
    rawSocket(stalled).pause();
    const stalledWriting = backlog(peer('stalled'), 400);
    await new Promise((r) => setTimeout(r, 200));
    await clock.advance(30_000);
    await clock.advance(30_000);
    expect(await stalledWriting).to.be.below(400);
    expect(cuts).to.deep.equal([{ name: 'stalled', reason: 'no_pong' }]);
  });

  it('pings every interval and cuts off a connection that did not answer the previous ping; a live one stays', async () => {
    const live = await connect('live');
    const dead = await connect('dead', { autoPong: false });
    let pings = 0;
    live.on('ping', () => (pings += 1));
    await clock.advance(30_000);
    await waitFor(() => pings === 1, { what: 'the first ping' });
    await new Promise((r) => setTimeout(r, 50));
    expect(cuts, 'nobody is cut at the first ping').to.deep.equal([]);
    await clock.advance(30_000);
    await waitFor(() => cuts.length === 1, { what: 'the silent connection cut' });
    expect(cuts).to.deep.equal([{ name: 'dead', reason: 'no_pong' }]);
    expect(dead.readyState === WebSocket.CLOSING || dead.readyState === WebSocket.CLOSED).to.equal(true);
    expect(live.readyState).to.equal(WebSocket.OPEN);
  });

  it('closes every connection with 1001 and cuts one that does not complete its close within the deadline', async () => {
    const polite = await connect('polite');
    const stuck = await connect('stuck');
    const code = new Promise((r) => polite.once('close', (c) => r(c)));
    rawSocket(stuck).pause();
    const t0 = Date.now();
    await set.closeAll(300);
    expect(await code).to.equal(1001);
    expect(Date.now() - t0).to.be.within(250, 2_000);
    expect(set.size).to.equal(0);
    expect(removed.sort()).to.deep.equal(['polite', 'stuck']);
  });
});
