import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Partitioners } from 'kafkajs';
import { TOPICS, formatErrors, loadContracts, type MarketTickMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { topicMessage, connectWs, createRegistryTopics, refusedUpgrade, stopProcess, testEnv, testKafka, uniquePrefix, waitFor, type TestWsClient } from '@chainpipe/testing';
import { client, createTestKey, startApp, startCandlestickPipeline, type Started } from '../integration/price/support';

/**
 * The candlestick service end to end: upstream-sim (OnchainOHLCV stream and CoinGecko REST),
 * market-ingester, kline-aggregator and market-gateway as real processes on the real Kafka,
 * Postgres and Redis, driven through HTTP and real `ws` clients.
 */
describe('candlestick service end to end (sim → ingester → Kafka → aggregator → Postgres/Redis → gateway WS/REST)', function () {
  this.timeout(120_000);
  const env = testEnv();
  const prefix = uniquePrefix('kline');
  const redisPrefix = `${env.runId}:kline:`;
  let db: Knex;
  let key: string;
  let sim: Started, ingester: Started, aggregator: Started, gw: Started;
  const api = client(() => gw.base, () => key);
  const wsUrl = (path: string) => gw.base.replace('http', 'ws') + path;
  const clients: TestWsClient[] = [];
  // Every server message must be what the AsyncAPI document says (schemas/ws/kline).
  const contracts = loadContracts();
  const serverMessage = contracts.validator('ws/kline/server-message');
  const ohlcvPush = contracts.validator('ws/kline/ohlcv-push');
  const checkMessage = (m: unknown): string | undefined => {
    if (!serverMessage(m)) return `not a ws/kline/server-message (${formatErrors(serverMessage.errors)})`;
    if ((m as { type: string }).type === 'ohlcv' && !ohlcvPush((m as { data: unknown }).data)) return `ohlcv data is not a ws/kline/ohlcv-push (${formatErrors(ohlcvPush.errors)})`;
    return undefined;
  };
  const open = async (path = '/kline/api/v1/kline/ws') => {
    const c = await connectWs(wsUrl(path), { 'x-api-key': key }, { check: checkMessage });
    clients.push(c);
    return c;
  };
  const addr = () => `0x${randomBytes(20).toString('hex')}`;
  const created: number[] = [];
  const createPool = async (body: Record<string, unknown>) => {
    const r = await api('POST', '/api/v1/admin/pools', { body: { chain_id: 1, network_id: 'eth', token: 'base', ...body } });
    expect(r.status, r.text).to.equal(200);
    created.push(r.body.data.id);
    return r.body.data;
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    await createRegistryTopics(prefix);
    // The suite registers and activates pools: an operator's key (D171).
    key = await createTestKey(db, 'kline', { role: 'operator' });
    ({ sim, ingester, aggregator, alongside: gw } = await startCandlestickPipeline({
      prefix,
      redisPrefix,
      sim: { SIM_OHLCV_MAX_SUBSCRIPTIONS: '2' },
      ingester: { MARKET_SUBSCRIPTIONS_PER_SOCKET: '2' },
      // The history tests publish 1s ticks of fixed days in November 2026: a retention of ten years
      // keeps the aggregator from refusing them as past it (D186).
      aggregator: { KLINE_AGGREGATOR_MAX_RECORDS_PER_CALL: '200', KLINE_1S_RETENTION_HOURS: String(10 * 365 * 24) },
      alongside: (s, common) => startApp('apps/market-gateway/src/main.ts', { ...common, KLINE_MARKET_API_URL: `${s.base}/coingecko/api/v3`, KLINE_WS_PING_MS: '1000' }),
    }));
  });

  afterEach(() => {
    for (const c of clients) expect(c.problems, 'WebSocket messages off their schema').to.deep.equal([]);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    // Leave no active pool behind for other runs' ingesters.
    if (created.length) await db('kline.pools').whereIn('id', created).update({ is_active: false });
    await Promise.all([ingester, aggregator, gw, sim].filter(Boolean).map((p) => stopProcess(p.proc)));
    await db?.destroy();
  });

  describe('pools admin', () => {
    it('validates, normalizes, refuses duplicates and pages', async () => {
      const bad = await api('POST', '/api/v1/admin/pools', { body: { chain_type: '', chain_id: 0, pool_address: 'x'.repeat(101), token: 'side', label: 'l'.repeat(101) } });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.include({ code: 10001, message: 'Invalid request body' });
      expect(bad.body.error.type).to.equal('ValidationError');
      expect(Object.keys(bad.body.error.details.fieldErrors).sort()).to.deep.equal(['chain_id', 'chain_type', 'label', 'network_id', 'pool_address', 'token']);
      expect(bad.body.error.details.formErrors).to.deep.equal([]);
      const notObject = await api('POST', '/api/v1/admin/pools', { body: [1] });
      expect(notObject.body.error.details.formErrors).to.have.length(1);
      const malformed = await api('POST', '/api/v1/admin/pools', { raw: '{"chain' });
      expect([malformed.status, malformed.body.code, malformed.body.error.type]).to.deep.equal([400, 10005, 'BadRequestError']);

      const address = addr().toUpperCase().replace('0X', '0x');
      const pool = await createPool({ chain_type: 'Ethereum', pool_address: address, dex_id: 'uniswap_v3', label: 'test' });
      expect(pool).to.include({ chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: address, token: 'base', dex_id: 'uniswap_v3', label: 'test', is_active: false });
      expect(Date.parse(pool.created_at)).to.be.closeTo(Date.now(), 60_000);
      const dup = await api('POST', '/api/v1/admin/pools', { body: { chain_type: 'eth', chain_id: 1, network_id: 'eth', pool_address: address.toLowerCase() } });
      expect([dup.status, dup.body.code, dup.body.message, dup.body.error.type]).to.deep.equal([409, 10004, 'Pool already exists', 'ConflictError']);

      const got = await api('GET', `/api/v1/admin/pools/${pool.id}`);
      expect(got.body).to.deep.equal({ code: 0, message: 'ok', data: pool });
      const missing = await api('GET', '/api/v1/admin/pools/2000000000');
      expect([missing.status, missing.body.code, missing.body.message, missing.body.error.type]).to.deep.equal([404, 60001, 'Pool not found', 'NotFoundError']);
      const missingPatch = await api('PATCH', '/api/v1/admin/pools/2000000000/activate');
      expect([missingPatch.status, missingPatch.body.code]).to.deep.equal([404, 60001]);
      const badId = await api('GET', '/api/v1/admin/pools/abc');
      expect([badId.status, badId.body.code]).to.deep.equal([400, 10001]);
      expect(badId.body.error.details.fieldErrors).to.have.property('id');

      const page = await api('GET', '/api/v1/admin/pools?page=1&page_size=1');
      expect(page.body.data.items).to.have.length(1);
      expect(page.body.data.pagination).to.include({ page: 1, pageSize: 1 });
      expect(page.body.data.pagination.totalPages).to.equal(page.body.data.pagination.total);
      for (const q of ['page_size=101', 'page_size=0', 'page=0', 'page=x']) {
        const r = await api('GET', `/api/v1/admin/pools?${q}`);
        expect([r.status, r.body.code], q).to.deep.equal([400, 10001]);
      }
    });

    it('needs a key: 401 without, 403 with an unknown one, code 20001', async () => {
      const none = await api('GET', '/api/v1/admin/pools', { key: null });
      expect([none.status, none.body.code, none.body.message, none.body.error.type]).to.deep.equal([401, 20001, 'Unauthorized', 'UnauthorizedError']);
      const wrong = await api('GET', '/kline/api/v1/kline/ohlcv', { key: 'cpk_0000000000000000_' + 'a'.repeat(43) });
      expect([wrong.status, wrong.body.code]).to.deep.equal([403, 20001]);
      const health = await api('GET', '/api/v1/health');
      expect(health.body.code).to.equal(0);
      expect(health.body.data.status).to.equal('ok');
      expect(Date.parse(health.body.data.timestamp)).to.be.closeTo(Date.now(), 60_000);
      const unknown = await api('GET', '/kline/api/v1/nothing');
      expect([unknown.status, unknown.body.code, unknown.body.error.type]).to.deep.equal([404, 10003, 'NotFoundError']);
    });
  });

  describe('collection and live push', () => {
    let a: any, b: any, c: any;

    before(async () => {
      a = await createPool({ chain_type: 'evm', pool_address: addr() });
      b = await createPool({ chain_type: 'solana', chain_id: 1, network_id: 'solana', pool_address: `So${randomBytes(16).toString('hex')}` });
      c = await createPool({ chain_type: 'evm', chain_id: 56, network_id: 'bsc', pool_address: addr(), token: 'quote' });
      for (const p of [a, b, c]) {
        const r = await api('PATCH', `/api/v1/admin/pools/${p.id}/activate`);
        expect(r.body.data.is_active).to.equal(true);
      }
    });

    it('subscribes upstream within the per-socket limit and stores candles of every interval', async () => {
      const status = await waitFor(async () => {
        const s = (await (await fetch(`${gw.base}/api/v1/admin/debug/ingester/status`)).json()) as any;
        const ids = s.pools.map((p: any) => p.poolId);
        return s.connected && s.channelConfirmed && [a.id, b.id, c.id].every((id) => ids.includes(id)) && s.lastTickAt ? s : undefined;
      }, { timeoutMs: 20_000, what: 'ingester connected with our pools' });
      expect(status.poolCount).to.equal(status.pools.length);
      expect(status.pools.find((p: any) => p.poolId === c.id)).to.deep.equal({ poolId: c.id, chainRefId: 'evm:56', chainType: 'evm', chainId: 56, networkId: 'bsc', poolAddress: c.pool_address, token: 'quote' });
      const simStatus = (await (await fetch(`${sim.base}/sim/coingecko/ws/status`)).json()) as any;
      // Limit 2 per socket: at least two sockets for our three pools, none over the limit.
      expect(simStatus.sockets.length).to.be.at.least(2);
      for (const s of simStatus.sockets) expect(s.subscriptions).to.be.at.most(2);

      const rows = await waitFor(async () => {
        const r = await db('kline.candles').where({ pool_id: a.id }).distinct('interval');
        return r.length === 9 ? r.map((x) => x.interval).sort() : undefined;
      }, { timeoutMs: 20_000, what: 'candles of every interval' });
      // The ticks' six intervals and the weeks, months and years they feed.
      expect(rows).to.deep.equal(['15m', '1M', '1Y', '1d', '1h', '1m', '1s', '1w', '4h']);
    });

    it('pushes subscribed, then ohlcv only for the subscribed pool and intervals; resubscribe gets a snapshot; unsubscribe stops', async () => {
      const c1 = await open();
      const c2 = await open();
      c1.send({ id: 's1', type: 'subscribe', data: { chain_type: 'ETH', chain_id: 1, pool_address: a.pool_address.toUpperCase().replace('0X', '0x'), intervals: ['1m', 'bogus'] } });
      const sub = await c1.next((m) => m.id === 's1');
      const aKey = `evm:1:${a.pool_address.toLowerCase()}:base`;
      expect(sub).to.include({ type: 'subscribed', code: 0, msg: 'ok' });
      expect(sub.data).to.deep.equal({ key: aKey, token: 'base', intervals: ['1m'] });
      expect(sub.time).to.be.closeTo(Date.now(), 10_000);
      c2.send({ id: 's2', type: 'subscribe', data: { chain_type: 'svm', chain_id: 1, pool_address: b.pool_address } });
      expect((await c2.next((m) => m.id === 's2')).type).to.equal('subscribed');

      const live = await c1.next((m) => m.type === 'ohlcv' && m.msg === 'ok');
      expect(live).to.include({ id: '', code: 0 });
      expect(live.data).to.include({ chain_type: 'evm', chain_id: 1, pool_address: a.pool_address, token: 'base', interval: '1m' });
      expect(live.data.open_time % 60).to.equal(0);
      for (const k of ['open', 'high', 'low', 'close', 'volume']) expect(live.data[k]).to.be.a('number');
      await c1.next((m) => m.type === 'ohlcv' && m.msg === 'ok');
      const pushes = c1.received.filter((m) => m.type === 'ohlcv');
      expect(new Set(pushes.map((m) => `${m.data.pool_address}|${m.data.interval}`))).to.deep.equal(new Set([`${a.pool_address}|1m`]));
      await c2.next((m) => m.type === 'ohlcv');
      const c2Pushes = c2.received.filter((m) => m.type === 'ohlcv');
      expect(c2Pushes.every((m) => m.data.pool_address === b.pool_address)).to.equal(true);

      c1.send({ id: 's3', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: a.pool_address, intervals: ['1h'] } });
      expect((await c1.next((m) => m.id === 's3' && m.type === 'subscribed')).data.intervals).to.deep.equal(['1h']);
      const snap = await c1.next((m) => m.type === 'ohlcv' && m.msg === 'snapshot');
      expect(snap.data).to.include({ interval: '1h', pool_address: a.pool_address });
      expect(snap.data.open_time % 3600).to.equal(0);
      const after = await c1.collect((m) => m.type === 'ohlcv', 800);
      expect(after.every((m) => m.data.interval === '1h')).to.equal(true);

      const hub = (await (await fetch(`${gw.base}/api/v1/admin/debug/hub/status`)).json()) as any;
      expect(hub.wsCount).to.be.at.least(2);
      expect(hub.pools).to.deep.include({ key: aKey, clientCount: 1 });
      expect(hub.lastIngestAt).to.be.a('string');

      c1.send({ id: 'u1', type: 'unsubscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: a.pool_address, token: 'quote' } });
      const un = await c1.next((m) => m.id === 'u1');
      expect(un).to.include({ type: 'unsubscribed', code: 0 });
      expect(un.data).to.deep.equal({ key: aKey, removed_keys: [aKey] });
      // A witness subscribed to the same pool and interval: once it has had two live pushes after
      // the unsubscribe, c1 would have had them too had it stayed subscribed (one socket keeps
      // order, so nothing sent before the reply arrives after it).
      const witness = await open();
      witness.send({ id: 'w1', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: a.pool_address, intervals: ['1h'] } });
      await witness.next((m) => m.id === 'w1' && m.type === 'subscribed');
      await witness.next((m) => m.type === 'ohlcv' && m.msg === 'ok');
      await witness.next((m) => m.type === 'ohlcv' && m.msg === 'ok');
      expect(c1.received.slice(c1.received.indexOf(un) + 1).filter((m) => m.type === 'ohlcv')).to.deep.equal([]);
    });

    it('answers every protocol error of the spec', async () => {
      const ws = await open();
      const ask = async (raw: string, id: string) => {
        ws.sendRaw(raw);
        return ws.next((m) => m.type === 'error' && m.id === id);
      };
      expect(await ask('{oops', '')).to.include({ code: 4001, msg: 'Invalid JSON', data: null });
      expect(await ask('{"type":"ping"}', '')).to.include({ code: 4001, msg: 'Missing id or type' });
      expect(await ask('{"id":"x1","type":"fly"}', 'x1')).to.include({ code: 4002, msg: 'Unknown command: fly' });
      expect(await ask('{"id":"x2","type":"subscribe","data":{"chain_type":"evm"}}', 'x2')).to.include({ code: 4001, msg: 'subscribe: missing required fields' });
      expect(await ask(JSON.stringify({ id: 'x3', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: a.pool_address, intervals: '1m,1h' } }), 'x3')).to.include({ msg: 'subscribe: missing required fields' });
      expect(await ask('{"id":"x4","type":"unsubscribe","data":{"chain_id":1}}', 'x4')).to.include({ code: 4001, msg: 'unsubscribe: missing required fields' });
      expect(await ask(JSON.stringify({ id: 'x5', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: addr() } }), 'x5')).to.include({ code: 4001, msg: 'subscribe: active pool not found' });
      // A value no pool row can hold (Postgres refuses NUL in text) matches nothing, as any unknown address.
      expect(await ask(JSON.stringify({ id: 'x5n', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: `${a.pool_address}\u0000` } }), 'x5n')).to.include({ code: 4001, msg: 'subscribe: active pool not found' });
      // Both sides of one pool active: the configuration is not unique.
      const address = addr();
      for (const token of ['base', 'quote']) {
        const p = await createPool({ chain_type: 'evm', chain_id: 10, network_id: 'optimism', pool_address: address, token });
        await api('PATCH', `/api/v1/admin/pools/${p.id}/activate`);
      }
      expect(await ask(JSON.stringify({ id: 'x6', type: 'subscribe', data: { chain_type: 'evm', chain_id: 10, pool_address: address } }), 'x6')).to.include({ code: 4500, msg: 'subscribe: ambiguous active pool' });
      ws.sendRaw(Buffer.from([1, 2, 3]), true);
      ws.send({ id: 'p1', type: 'ping' });
      const pong = await ws.next((m) => m.id === 'p1');
      expect(pong).to.include({ type: 'pong', code: 0, msg: 'ok' });
      expect(pong.data).to.deep.equal({});
      expect(ws.received.filter((m) => m.type === 'error')).to.have.length(9);
    });

    it('handshakes: 426 without upgrade, 401/403 without a valid key; the topic socket pongs and refuses binary', async () => {
      const plain = await api('GET', '/kline/api/v1/kline/ws');
      expect(plain.status).to.equal(426);
      expect(plain.body).to.deep.equal({ code: 4000, message: 'WebSocket upgrade required', error: { type: 'BadRequestError' } });
      const none = await refusedUpgrade(wsUrl('/kline/api/v1/kline/ws'));
      expect(none.status).to.equal(401);
      expect(JSON.parse(none.body)).to.deep.equal({ code: 20001, message: 'Unauthorized', error: { type: 'UnauthorizedError' } });
      expect((await refusedUpgrade(wsUrl('/kline/api/v1/kline/ws'), { 'x-api-key': 'nope' })).status).to.equal(403);
      // A browser cannot send headers: it offers the key as a subprotocol; the server selects kline.v1, never the key.
      expect((await refusedUpgrade(wsUrl('/kline/api/v1/kline/ws'), { 'sec-websocket-protocol': 'kline.v1, x-api-key.nope' })).status).to.equal(403);
      const browserLike = await connectWs(wsUrl('/kline/api/v1/kline/ws'), {}, { check: checkMessage, protocols: ['kline.v1', `x-api-key.${key}`] });
      clients.push(browserLike);
      expect(browserLike.ws.protocol).to.equal('kline.v1');
      browserLike.send({ id: 'b1', type: 'ping' });
      expect(await browserLike.next((m) => m.id === 'b1')).to.include({ type: 'pong', code: 0 });

      const topicPlain = await api('GET', '/kline/api/v1/ws/charts');
      expect([topicPlain.status, topicPlain.text]).to.deep.equal([426, 'Expected WebSocket upgrade']);
      const t = await open('/kline/api/v1/ws/charts');
      t.send({ id: 't1', type: 'ping' });
      expect(await t.next((m) => m.id === 't1')).to.include({ type: 'pong', code: 0, msg: 'ok' });
      t.sendRaw(Buffer.from('x'), true);
      expect(await t.next((m) => m.type === 'error')).to.include({ code: 4001, msg: 'Binary messages are not supported' });
    });

    it('an oversized or malformed frame closes only its own socket (1009, 1007), on the hub and on a topic socket; the gateway goes on', async () => {
      const closeCode = (c: { ws: import('ws').WebSocket }) => new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
      for (const path of ['/kline/api/v1/kline/ws', '/kline/api/v1/ws/charts']) {
        const big = await open(path);
        const bigClosed = closeCode(big);
        big.ws.send('x'.repeat(70 * 1024));
        expect(await bigClosed, `${path}: a frame past 64 KiB`).to.equal(1009);
        const garbled = await open(path);
        const garbledClosed = closeCode(garbled);
        garbled.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
        expect(await garbledClosed, `${path}: a text frame that is not UTF-8`).to.equal(1007);
      }
      const after = await open('/kline/api/v1/ws/charts');
      after.send({ id: 'a1', type: 'ping' });
      expect(await after.next((m) => m.id === 'a1')).to.include({ type: 'pong', code: 0 });
      expect(gw.proc.output()).to.not.match(/uncaught|unhandled/i);
    });

    it('reconnects after the upstream drops the connection, and ensure answers ok', async () => {
      const dropped = (await (await fetch(`${sim.base}/sim/coingecko/ws/drop`, { method: 'POST' })).json()) as any;
      expect(dropped.dropped).to.be.at.least(2);
      const droppedAt = Date.now();
      await waitFor(async () => {
        const s = (await (await fetch(`${gw.base}/api/v1/admin/debug/ingester/status`)).json()) as any;
        return s.connected && s.channelConfirmed && Date.parse(s.lastTickAt) > droppedAt + 200;
      }, { timeoutMs: 20_000, what: 'ticks again after the drop' });
      expect(ingester.proc.output()).to.match(/upstream_disconnected/);
      await waitFor(async () => {
        const row = await db('kline.candles').where({ pool_id: a.id, interval: '1s' }).max<{ m: string }[]>({ m: 'updated_at' });
        return row[0].m && new Date(row[0].m).getTime() > droppedAt + 200;
      }, { timeoutMs: 20_000, what: 'candles stored after the drop' });

      const ensure = await fetch(`${gw.base}/api/v1/admin/debug/ingester/ensure`, { method: 'POST' });
      expect([ensure.status, await ensure.text()]).to.deep.equal([200, 'ok']);
    });

    it('deactivate stops collection of the pool', async () => {
      const r = await api('PATCH', `/api/v1/admin/pools/${c.id}/deactivate`);
      expect(r.body.data.is_active).to.equal(false);
      await waitFor(async () => {
        const s = (await (await fetch(`${gw.base}/api/v1/admin/debug/ingester/status`)).json()) as any;
        return !s.pools.some((p: any) => p.poolId === c.id);
      }, { timeoutMs: 15_000, what: 'pool dropped by the ingester' });
      const last = async () => String((await db('kline.candles').where({ pool_id: c.id, interval: '1s' }).max<{ m: string }[]>({ m: 'updated_at' }))[0].m);
      // Ticks already on their way through Kafka still land; then nothing more does. Pool a, still
      // collected on the same path, marks how far the pipeline has got: once it has stored candles
      // of ticks received after a moment, any tick of c from before that moment has landed too.
      const storedA = async () => new Date((await db('kline.candles').where({ pool_id: a.id, interval: '1s' }).max<{ m: Date }[]>({ m: 'updated_at' }))[0].m).getTime();
      const pipelinePassed = (t: number, what: string) => waitFor(async () => (await storedA()) > t, { timeoutMs: 20_000, what });
      await pipelinePassed(Date.now() + 1_000, 'pool a stored a second past the drop');
      const seen = await last();
      await pipelinePassed(Date.now() + 2_000, 'pool a stored two more seconds');
      expect(await last(), 'no candle of the deactivated pool since').to.equal(seen);
    });
  });

  describe('history and aggregation', () => {
    const producer = testKafka().producer({ createPartitioner: Partitioners.DefaultPartitioner });
    const utc = (iso: string) => Date.parse(iso) / 1000;
    let pool: any;
    let seq = 0;
    const tick = (interval: MarketTickMessage['interval'], t: number, o: number, h: number, l: number, c: number, v: number | null, receivedAt: number): MarketTickMessage =>
      topicMessage(TOPICS.marketTicks, {
      pool_id: pool.id,
      chain_type: pool.chain_type,
      chain_id: pool.chain_id,
      network_id: pool.network_id,
      pool_address: pool.pool_address,
      token: pool.token,
      interval,
      open_time: t,
      open: o,
      high: h,
      low: l,
      close: c,
      volume: v,
      received_at: receivedAt,
      seq: ++seq,
      });
    const publish = (ticks: MarketTickMessage[]) => producer.send({ topic: prefix + TOPICS.marketTicks.name, messages: ticks.map((t) => ({ key: 'k', value: JSON.stringify(t) })) });
    const ohlcv = (q: string) => api('GET', `/kline/api/v1/kline/ohlcv?chain_type=polygon&chain_id=137&pool_address=${pool.pool_address}&${q}`);

    before(async () => {
      await producer.connect();
      // Registered but never activated: its candles come only from the ticks this test publishes.
      pool = await createPool({ chain_type: 'polygon', chain_id: 137, network_id: 'polygon_pos', pool_address: addr() });
    });
    after(() => producer.disconnect());

    it('merges 1s updates given out of order and twice into the hand-computed 1m candle', async () => {
      const t0 = utc('2026-11-20T10:00:00Z');
      // Second 5: snapshots (o 10, h 10→12, l 10→8, c 10→12→9, v 1→3→4); second 40: (o 9, h 11→15, l 9→7, c 11→14, v 5→7).
      const ticks = [
        tick('1s', t0 + 5, 10, 10, 10, 10, 1, 1000),
        tick('1s', t0 + 5, 10, 12, 10, 12, 3, 2000),
        tick('1s', t0 + 5, 10, 12, 8, 9, 4, 3000),
        tick('1s', t0 + 40, 9, 11, 9, 11, 5, 4000),
        tick('1s', t0 + 40, 9, 15, 7, 14, 7, 5000),
      ];
      await publish([ticks[4], ticks[1], ticks[3]]);
      await publish([ticks[0], ticks[2], ticks[4], ticks[1]]);
      // 1m: open 10 (second 5), high 15, low 7, close 14 (last update of second 40), volume 4 + 7 = 11.
      const expected = { pool_id: pool.id, interval: '1m', open_time: t0, open: 10, high: 15, low: 7, close: 14, volume: 11 };
      const got = await waitFor(async () => {
        const r = await ohlcv(`interval=1m&from=${t0}&to=${t0 + 59}`);
        return r.body.data?.length === 1 && r.body.data[0].volume === 11 ? r.body.data : undefined;
      }, { timeoutMs: 20_000, what: '1m candle' });
      expect(got).to.deep.equal([expected]);
      const secs = await ohlcv(`interval=1s&from=${(t0 * 1000) + 1}&to=${(t0 + 60) * 1000}&token=quote`);
      expect(secs.body.data.map((c: any) => [c.open_time, c.close, c.volume])).to.deep.equal([[t0 + 5, 9, 4], [t0 + 40, 14, 7]]);
      const limited = await ohlcv(`interval=1s&from=${t0}&to=${t0 + 60}&limit=1`);
      expect(limited.body.data).to.have.length(1);
    });

    it('stores 1w, 1M and 1Y candles fed by the 1d candles, as their roll-ups', async () => {
      // Daily candles (ticks of interval 1d): Sun 2026-11-22, Mon 11-23, Tue 11-24, Mon 11-30, Tue 12-01.
      await publish([
        tick('1d', utc('2026-11-22T00:00:00Z'), 1, 5, 1, 2, 5, 1),
        tick('1d', utc('2026-11-23T00:00:00Z'), 2, 6, 1.5, 3, null, 2),
        tick('1d', utc('2026-11-24T00:00:00Z'), 3, 9, 2, 4, 10, 3),
        tick('1d', utc('2026-11-30T00:00:00Z'), 4, 4.5, 3.5, 4.2, 1, 4),
        tick('1d', utc('2026-12-01T00:00:00Z'), 4.2, 8, 4, 7, 2, 5),
      ]);
      const from = utc('2026-11-01T00:00:00Z');
      const to = utc('2026-12-31T00:00:00Z');
      await waitFor(async () => (await ohlcv(`interval=1d&from=${from}&to=${to}`)).body.data?.length === 6, { timeoutMs: 20_000, what: 'daily candles' });
      const c = (interval: string, iso: string, o: number, h: number, l: number, cl: number, v: number) => ({ pool_id: pool.id, interval, open_time: utc(iso), open: o, high: h, low: l, close: cl, volume: v });
      // The 1m test stored 2026-11-20 too (open 10, high 15, low 7, close 14, volume 11).
      // Weeks start Monday: Nov 16 (Fri 20th + Sun 22nd: open 10, high 15, low 1, close 2, volume 16), Nov 23 (Mon+Tue: open 2, close 4, high 9, low 1.5, volume 0+10), Nov 30 (open 4, close 7, high 8, low 3.5, volume 3).
      expect((await ohlcv(`interval=1w&from=${utc('2026-11-16T00:00:00Z')}&to=${to}`)).body.data).to.deep.equal([
        c('1w', '2026-11-16T00:00:00Z', 10, 15, 1, 2, 16),
        c('1w', '2026-11-23T00:00:00Z', 2, 9, 1.5, 4, 10),
        c('1w', '2026-11-30T00:00:00Z', 4, 8, 3.5, 7, 3),
      ]);
      // November: 20th–30th → open 10, close 4.2, high 15, low 1, volume 11 + 5 + 10 + 1 = 27; December: the 1st.
      expect((await ohlcv(`interval=1M&from=${from}&to=${to}`)).body.data).to.deep.equal([c('1M', '2026-11-01T00:00:00Z', 10, 15, 1, 4.2, 27), c('1M', '2026-12-01T00:00:00Z', 4.2, 8, 4, 7, 2)]);
      // The year: open 10 (Nov 20), close 7 (Dec 1), high 15, low 1, volume 11 + 5 + 10 + 1 + 2 = 29.
      expect((await ohlcv(`interval=1Y&from=${utc('2026-01-01T00:00:00Z')}&to=${to}`)).body.data).to.deep.equal([c('1Y', '2026-01-01T00:00:00Z', 10, 15, 1, 7, 29)]);
    });

    it('validates every query rule and answers [] for an unknown pool', async () => {
      const none = await api('GET', '/kline/api/v1/kline/ohlcv');
      expect([none.status, none.body.code, none.body.message, none.body.error.type]).to.deep.equal([400, 10001, 'Invalid query params', 'ValidationError']);
      expect(Object.keys(none.body.error.details.fieldErrors).sort()).to.deep.equal(['chain_id', 'chain_type', 'from', 'interval', 'pool_address', 'to']);
      const base = 'chain_type=evm&chain_id=1&pool_address=0xabc&from=1&to=2';
      for (const [q, field] of [
        [`${base}&interval=5m`, 'interval'],
        [`${base}&interval=1m&limit=0`, 'limit'],
        [`${base}&interval=1m&limit=5001`, 'limit'],
        [`${base}&interval=1m&limit=1.5`, 'limit'],
        ['interval=1m&chain_type=evm&chain_id=0&pool_address=0xabc&from=1&to=2', 'chain_id'],
        ['interval=1m&chain_type=evm&chain_id=-1&pool_address=0xabc&from=1&to=2', 'chain_id'],
        ['interval=1m&chain_type=evm&chain_id=1&pool_address=0xabc&from=x&to=2', 'from'],
        ['interval=1m&chain_type=evm&chain_id=1&pool_address=0xabc&from=1&to=-2', 'to'],
        [`${base}&interval=1m&token=middle`, 'token'],
        [`interval=1m&chain_type=${'e'.repeat(51)}&chain_id=1&pool_address=0xabc&from=1&to=2`, 'chain_type'],
      ]) {
        const r = await api('GET', `/kline/api/v1/kline/ohlcv?${q}`);
        expect([r.status, r.body.code], q).to.deep.equal([400, 10001]);
        expect(Object.keys(r.body.error.details.fieldErrors), q).to.deep.equal([field]);
      }
      const empty = await api('GET', `/kline/api/v1/kline/ohlcv?${base}&interval=1m&limit=5000`);
      expect(empty.body).to.deep.equal({ code: 0, message: 'ok', data: [] });
    });
  });

  describe('market look-ups', () => {
    it('relays pool, top holders and coin look-ups with their options; upstream failures are 99001', async () => {
      const pool = await api('GET', '/kline/api/v1/market/pools/eth/0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640?include=base_token,quote_token');
      expect(pool.status, pool.text).to.equal(200);
      // The recorded CoinGecko example: WETH / USDC 0.05%.
      expect(pool.body.data.data.attributes.name).to.equal('WETH / USDC 0.05%');
      const holders = await api('GET', '/kline/api/v1/market/tokens/solana/Dfh5DzRgSvvCFDoYc2ciTkMrbDfRKybA4SoFbPmApump/top-holders?holders=1&include_pnl_details=true');
      expect(holders.body.data.data.attributes.holders).to.have.length(1);
      expect(holders.body.data.data.attributes.holders[0].address).to.equal('u6PJ8DtQuPFnfmwHbGFULQ4u4EgjDiyYKjVEsynXq2w');
      const coin = await api('GET', '/kline/api/v1/market/coins/ethereum/0xdac17f958d2ee523a2206206994597c13d831ec7');
      expect(coin.body.data).to.include({ asset_platform_id: 'ethereum', contract_address: '0xdac17f958d2ee523a2206206994597c13d831ec7' });

      for (const path of ['/market/pools/eth/0xabc?include_composition=maybe', '/market/pools/eth/0xabc?include_volume_breakdown=1', '/market/tokens/eth/0xabc/top-holders?holders=0', `/market/coins/${'n'.repeat(101)}/0xabc`, `/market/pools/eth/${'a'.repeat(201)}`]) {
        const r = await api('GET', `/kline/api/v1${path}`);
        expect([r.status, r.body.code], path).to.deep.equal([400, 10001]);
      }
      const unknown = await api('GET', '/kline/api/v1/market/pools/eth/0x0000000000000000000000000000000000000001');
      expect([unknown.status, unknown.body.code]).to.deep.equal([404, 10003]);

      for (const kind of ['error', 'http500']) {
        await fetch(`${sim.base}/sim/faults/coingecko`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind }) });
        const failed = await api('GET', '/kline/api/v1/market/coins/ethereum/0xdac17f958d2ee523a2206206994597c13d831ec7');
        expect(failed.status, kind).to.equal(500);
        expect(failed.body).to.deep.equal({ code: 99001, message: 'Internal server error', error: { type: 'InternalServerError' } });
      }
      await fetch(`${sim.base}/sim/faults/coingecko`, { method: 'DELETE' });
    });
  });
});
