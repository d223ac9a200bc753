import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import express from 'express';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { ApiRoutes, HttpError, createHttpApp, createKeyResolver, finishHttpApp, listen, messageEnvelope, msgEnvelope, requireApiKey, sendOk, validateBody, type StartedServer } from '@chainpipe/http';
import { createRedis, redisComponent } from '@chainpipe/redis';
import { createLogger } from '@chainpipe/runtime';
import { createAppWithKey,parsePrometheusText, readJson, testEnv } from '@chainpipe/testing';

describe('http library on a real server with keys in the real database', () => {
  let db: Knex;
  let server: StartedServer;
  let base: string;
  let token: string;
  const registry = new Registry();

  before(async () => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 2 });
    const repo = new ApiKeyRepository(db);
    token = (await createAppWithKey(db, { name: 'http test' })).key;
    const logger = createLogger({ name: 'http-test', level: 'silent' });
    const app = createHttpApp({ logger, registry, defaultEnvelope: msgEnvelope, envelopeFor: (path) => (path.startsWith('/a/') ? messageEnvelope : undefined), timeoutMs: 300 });
    app.use(requireApiKey(createKeyResolver((id) => repo.findKey(id))));
    app.use(express.json({ limit: 1024 }));
    const a = express.Router();
    a.post('/a/changes', validateBody(loadContracts(), 'kafka/addresses.changes.v1'), (req, res) => sendOk(res, { app: res.locals.principal.appId, adds: req.body.adds.length }));
    a.get('/a/slow', async () => new Promise((r) => setTimeout(r, 1000)));
    a.get('/a/teapot', () => {
      throw new HttpError(418, 'short and stout', 41800);
    });
    a.get('/a/bug', () => {
      throw new Error('internal detail that must not leak');
    });
    app.use(a);
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.address.port}`;
  });

  after(async () => {
    await server.close();
    await db.destroy();
  });

  const call = (path: string, init: RequestInit = {}, key: string | null = token) =>
    fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...(init.headers ?? {}) } });

  it('authenticates: missing key 401, unknown key 403, valid key passes with its application', async () => {
    const missing = await call('/a/teapot', {}, null);
    expect(missing.status).to.equal(401);
    expect(await readJson(missing)).to.deep.equal({ code: 401, message: 'missing X-API-Key', data: null });
    const forged = await call('/a/teapot', {}, token.slice(0, -2) + 'zz');
    expect(forged.status).to.equal(403);
    const ok = await call('/a/changes', { method: 'POST', body: JSON.stringify({ app_id: 'x', chain_type: 'ethereum', adds: ['0x1'], removes: [], changed_at: 1 }) });
    expect(ok.status).to.equal(200);
    expect((await readJson(ok)).data.adds).to.equal(1);
  });

  it('validates bodies from schemas/ and names the field; malformed JSON and oversized bodies get the envelope', async () => {
    const bad = await call('/a/changes', { method: 'POST', body: JSON.stringify({ app_id: 'x', adds: 'no' }) });
    expect(bad.status).to.equal(400);
    const body = await readJson(bad);
    expect(body).to.include({ code: 400, data: null });
    expect(body.message).to.match(/chain_type is required/);
    const malformed = await call('/a/changes', { method: 'POST', body: '{"app_id":' });
    expect(malformed.status).to.equal(400);
    expect(await readJson(malformed)).to.deep.equal({ code: 400, message: 'invalid JSON', data: null });
    const big = await call('/a/changes', { method: 'POST', body: JSON.stringify({ pad: 'x'.repeat(5000) }) });
    expect(big.status).to.equal(413);
    expect(await readJson(big)).to.deep.equal({ code: 413, message: 'request body too large', data: null });
  });

  it('answers 504 at the deadline, maps HttpErrors, hides internal errors, 404s unknown routes', async () => {
    const t0 = Date.now();
    const slow = await call('/a/slow');
    expect(slow.status).to.equal(504);
    expect(Date.now() - t0).to.be.lessThan(900);
    expect((await readJson(slow)).message).to.match(/timed out/);
    const teapot = await call('/a/teapot');
    expect(teapot.status).to.equal(418);
    expect(await readJson(teapot)).to.deep.equal({ code: 41800, message: 'short and stout', data: null });
    const bug = await call('/a/bug');
    expect(bug.status).to.equal(500);
    expect(JSON.stringify(await readJson(bug))).to.not.contain('internal detail');
    const none = await call('/nope');
    expect(none.status).to.equal(404);
    expect((await readJson(none)).msg).to.match(/no route/);
    expect(slow.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('records request metrics by route template and status', async () => {
    const e = parsePrometheusText(await registry.metrics());
    const teapots = e.samples.find((s) => s.name === 'chainpipe_http_requests_total' && s.labels.route === '/a/teapot' && s.labels.status === '418');
    expect(teapots?.value).to.be.at.least(1);
  });
});

describe('the request boundary of ApiRoutes: no NUL and no integer past its column reaches a handler', () => {
  let server: StartedServer;
  let base: string;
  const reached: string[] = [];

  before(async () => {
    const logger = createLogger({ name: 'boundary-test', level: 'silent' });
    const app = createHttpApp({ logger, registry: new Registry(), defaultEnvelope: msgEnvelope, timeoutMs: 2000 });
    const api = new ApiRoutes({ contracts: loadContracts(), jsonBody: express.json() });
    const ok = { data: { type: 'string' }, description: 'reached' };
    const handler: express.RequestHandler = (req, res) => {
      reached.push(req.originalUrl);
      sendOk(res, 'reached');
    };
    const notFound: express.RequestHandler = (_req, res) => res.status(404).json({ code: 404, msg: 'no such pool', data: null });
    // kline pool-id-path: a digit string bounded by the int4 column (decimalMaximum 2147483647)
    api.route({ method: 'get', path: '/b/pools/:id', summary: 's', auth: 'none', request: { path: 'http/kline/pool-id-path', lookup: { params: ['id'], notFound } }, ok }, handler);
    api.route({ method: 'get', path: '/b/orders/:orderNo', summary: 's', auth: 'none', request: { params: 'http/agg/integrator-order-params' }, ok }, handler);
    // kline pool-create: chain_id a JSON integer bounded by the bigint column (and JSON's exact range)
    api.route({ method: 'post', path: '/b/pools', summary: 's', auth: 'none', request: { body: 'http/kline/pool-create' }, ok }, handler);
    api.route({ method: 'get', path: '/b/tokens', summary: 's', auth: 'none', request: { query: 'http/price/tokens-query', checkedByHandler: true }, ok }, handler);
    app.use(api.router);
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.address.port}`;
  });
  after(() => server.close());

  const get = async (path: string) => {
    const res = await fetch(base + path);
    return { status: res.status, body: await readJson(res) };
  };
  const post = async (path: string, body: string) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, body: await readJson(res) };
  };
  const pool = { chain_type: 'ethereum', chain_id: 1, network_id: 'eth', pool_address: '0xabc' };

  it('answers a lookup parameter no row can hold with the route\'s "not found", a malformed one with 400', async () => {
    expect(await get('/b/pools/2147483647')).to.deep.equal({ status: 200, body: { code: 0, msg: 'success', data: 'reached' } });
    expect(await get('/b/pools/2147483648')).to.deep.equal({ status: 404, body: { code: 404, msg: 'no such pool', data: null } });
    expect(await get('/b/pools/999999999999999')).to.deep.equal({ status: 404, body: { code: 404, msg: 'no such pool', data: null } });
    const malformed = await get('/b/pools/12x');
    expect(malformed.status).to.equal(400);
    expect(malformed.body.msg).to.match(/^id /);
    expect(reached).to.deep.equal(['/b/pools/2147483647']);
  });

  it('refuses a NUL anywhere (path, query, body value or key) with 400 naming the parameter, checked-by-handler routes too', async () => {
    expect(await get('/b/orders/A%00B')).to.deep.equal({ status: 400, body: { code: 400, msg: 'orderNo must not contain NUL characters', data: null } });
    expect(await get('/b/tokens?chain_id=1&address=0x%00')).to.deep.equal({ status: 400, body: { code: 400, msg: 'address must not contain NUL characters', data: null } });
    expect(await post('/b/pools', JSON.stringify({ ...pool, label: 'a\u0000b' }))).to.deep.equal({ status: 400, body: { code: 400, msg: 'label must not contain NUL characters', data: null } });
    const key = await post('/b/pools', JSON.stringify({ ...pool, ['x\u0000']: 1 }));
    expect(key.status).to.equal(400);
    expect(key.body.msg).to.contain('x\u0000 must not contain NUL characters');
    expect(reached.filter((u) => u !== '/b/pools/2147483647')).to.deep.equal([]);
  });

  it('refuses an integer past its column (bigint chain_id of 12345678901234567890) with 400 naming it', async () => {
    const res = await post('/b/pools', `{"chain_type":"ethereum","chain_id":12345678901234567890,"network_id":"eth","pool_address":"0xabc"}`);
    expect(res).to.deep.equal({ status: 400, body: { code: 400, msg: 'chain_id must be <= 9007199254740991', data: null } });
    expect((await post('/b/pools', JSON.stringify({ ...pool, chain_id: 9007199254740991 }))).status).to.equal(200);
  });
});

describe('redis factory (real Redis)', () => {
  it('connects with a key prefix, reports health, and quits on stop', async () => {
    const prefix = `chainpipe-test:${randomBytes(3).toString('hex')}:`;
    const redis = createRedis({ url: testEnv().redisUrl, keyPrefix: prefix });
    const component = redisComponent(redis);
    await redis.set('k', 'v', 'EX', 30);
    expect(component.health()).to.deep.equal({ state: 'ok' });
    const raw = createRedis({ url: testEnv().redisUrl });
    expect(await raw.get(`${prefix}k`)).to.equal('v');
    await raw.quit();
    await component.stop();
    expect(redis.status).to.equal('end');
  });
});

describe('db factory (real Postgres)', () => {
  it('bounds statements with statement_timeout', async () => {
    const db = createDb({ url: testEnv().databaseUrl, poolMax: 1, statementTimeoutMs: 200 });
    try {
      const t0 = Date.now();
      let err: unknown;
      await db.raw('select pg_sleep(5)').catch((e) => (err = e));
      expect((err as { code?: string }).code).to.equal('57014'); // query_canceled
      expect(Date.now() - t0).to.be.lessThan(2000);
    } finally {
      await db.destroy();
    }
  });
});

describe('db factory settings', () => {
  it('turns JIT off for its connections', async () => {
    const db = createDb({ url: testEnv().databaseUrl, poolMax: 1 });
    try {
      const { rows } = await db.raw<{ rows: { jit: string }[] }>('show jit');
      expect(rows[0].jit).to.equal('off');
    } finally {
      await db.destroy();
    }
  });
});
