import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import express from 'express';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, StatementCache, createDb, type Knex } from '@chainpipe/db';
import { ApiRoutes, HttpError, createHttpApp, createKeyResolver, finishHttpApp, leaveRequestDeadline, listen, messageEnvelope, msgEnvelope, requireApiKey, sendOk, serveExactRoutes, validateBody, type StartedServer } from '@chainpipe/http';
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
    a.get('/a/long', async (_req, res) => {
      leaveRequestDeadline(res);
      await new Promise((r) => setTimeout(r, 600));
      sendOk(res, 'late but whole');
    });
    a.get('/a/big', (_req, res) => sendOk(res, { text: 'ünïcødé '.repeat(300), n: [1, 2.5, null] }, { message: 'ok' }));
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

  it('sends JSON bodies as express would: type, byte length, no body for HEAD; conditional requests the same', async () => {
    const expected = JSON.stringify({ code: 0, message: 'ok', data: { text: 'ünïcødé '.repeat(300), n: [1, 2.5, null] } });
    const res = await call('/a/big');
    expect([res.status, res.headers.get('content-type'), res.headers.get('content-length')]).to.deep.equal([200, 'application/json; charset=utf-8', String(Buffer.byteLength(expected))]);
    expect(await res.text()).to.equal(expected);
    const head = await call('/a/big', { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length'), await head.text()]).to.deep.equal([200, String(Buffer.byteLength(expected)), '']);
    // Conditional requests take express's own path (its freshness rules); the answer is the same.
    const conditional = await call('/a/big', { headers: { 'if-modified-since': new Date().toUTCString() } });
    expect([conditional.status, conditional.headers.get('content-type'), await conditional.text()]).to.deep.equal([200, 'application/json; charset=utf-8', expected]);
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

  it('a response taken out of the request deadline runs past it', async () => {
    const t0 = Date.now();
    const long = await call('/a/long');
    expect(long.status).to.equal(200);
    expect(Date.now() - t0, 'past the 300 ms deadline').to.be.at.least(550);
    expect(await readJson(long)).to.deep.equal({ code: 0, message: 'success', data: 'late but whole' });
  });

  it('records request metrics by route template and status', async () => {
    const e = parsePrometheusText(await registry.metrics());
    const teapots = e.samples.find((s) => s.name === 'chainpipe_http_requests_total' && s.labels.route === '/a/teapot' && s.labels.status === '418');
    expect(teapots?.value).to.be.at.least(1);
  });
});

describe('exact routes served from a table before express (serveExactRoutes)', () => {
  let server: StartedServer;
  let base: string;
  const registry = new Registry();
  const steps: string[] = [];
  let app: express.Express;

  before(async () => {
    const logger = createLogger({ name: 'http-test', level: 'silent' });
    app = createHttpApp({ logger, registry, defaultEnvelope: msgEnvelope, timeoutMs: 1_000 });
    const gate: express.RequestHandler = async (req, res, next) => {
      await new Promise((r) => setImmediate(r));
      if (req.header('x-stop')) return sendOk(res, 'stopped at the gate');
      steps.push('gate');
      next();
    };
    const api = new ApiRoutes({ contracts: loadContracts(), auth: { gate: { handler: gate, scheme: { type: 'apiKey', in: 'header', name: 'x-stop' }, errors: {} } } });
    const ok = { data: { type: 'string' }, description: 'd' } as const;
    // Declared first with a parameter, it answers /p/exact too: the exact route after it must never run.
    api.route({ method: 'get', path: '/p/:tx_hash', summary: 's', auth: 'none', request: { params: 'http/tx/queries-transaction', checkedByHandler: true }, ok }, (req, res) => sendOk(res, `param ${req.params.tx_hash}`));
    api.route({ method: 'get', path: '/p/exact', summary: 's', auth: 'none', ok }, (_req, res) => sendOk(res, 'exact, shadowed'));
    api.route({ method: 'get', path: '/q/fast', summary: 's', auth: 'gate', ok }, (_req, res) => sendOk(res, 'fast'));
    api.route({ method: 'get', path: '/q/boom', summary: 's', auth: 'gate', ok }, async () => {
      throw new HttpError(418, 'short and stout', 41800);
    });
    api.route({ method: 'get', path: '/q/silent', summary: 's', auth: 'none', ok }, (_req, _res, next) => next());
    api.route({ method: 'get', path: '/q/slow', summary: 's', auth: 'none', ok }, () => undefined);
    serveExactRoutes(app, [api]);
    app.use(api.router);
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.address.port}`;
  });
  after(() => server.close());

  it('runs the same handlers in order, errors to the error handler, HEAD as GET, any case and a trailing slash; a path an earlier parameter route matches stays with it', async () => {
    const get = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(base + path, init);
      return [res.status, init.method === 'HEAD' ? await res.text() : await res.json()];
    };
    expect(await get('/q/fast')).to.deep.equal([200, { code: 0, msg: 'success', data: 'fast' }]);
    expect(await get('/Q/Fast/')).to.deep.equal([200, { code: 0, msg: 'success', data: 'fast' }]);
    expect(await get('/q/fast', { headers: { 'x-stop': '1' } })).to.deep.equal([200, { code: 0, msg: 'success', data: 'stopped at the gate' }]);
    expect(steps).to.deep.equal(['gate', 'gate']);
    expect(await get('/q/fast', { method: 'HEAD' })).to.deep.equal([200, '']);
    expect(await get('/q/boom')).to.deep.equal([418, { code: 41800, msg: 'short and stout', data: null }]);
    expect(await get('/p/exact')).to.deep.equal([200, { code: 0, msg: 'success', data: 'param exact' }]);
    expect(await get('/q/silent')).to.deep.equal([404, { code: 404, msg: 'no route for GET /q/silent', data: null }]);
    expect(await get('/q/fast', { method: 'POST' })).to.deep.equal([404, { code: 404, msg: 'no route for POST /q/fast', data: null }]);
    const metrics = await registry.metrics();
    expect(metrics).to.include('route="/q/fast",status="200"');
    expect(metrics).to.include('route="/q/boom",status="418"');
  });

  it('gives an exact route what every request gets: its request id (given or new), the deadline, the 404 of an unknown path', async () => {
    const given = await fetch(`${base}/q/fast`, { headers: { 'x-request-id': 'req-42.a' } });
    expect(given.headers.get('x-request-id')).to.equal('req-42.a');
    const fresh = await fetch(`${base}/q/fast`, { headers: { 'x-request-id': 'bad id!' } });
    expect(fresh.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const slow = await fetch(`${base}/q/slow`);
    expect([slow.status, await slow.json()]).to.deep.equal([504, { code: 504, msg: 'request timed out after 1 seconds', data: null }]);
    const unknown = await fetch(`${base}/q/none`);
    expect([unknown.status, await unknown.json()]).to.deep.equal([404, { code: 404, msg: 'no route for GET /q/none', data: null }]);
    expect(await registry.metrics()).to.include('route="/q/slow",status="504"');
  });

  it('answers the same through express when the app is mounted inside another (the dispatcher of the table)', async () => {
    const outer = express();
    outer.use(app);
    const mounted = await listen(outer, 0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${mounted.address.port}/q/fast`);
      expect([res.status, await res.json()]).to.deep.equal([200, { code: 0, msg: 'success', data: 'fast' }]);
      const boom = await fetch(`http://127.0.0.1:${mounted.address.port}/q/boom`);
      expect([boom.status, await boom.json()]).to.deep.equal([418, { code: 41800, msg: 'short and stout', data: null }]);
    } finally {
      await mounted.close();
    }
  });

  it('refuses to serve exact routes in front of middleware mounted before them', () => {
    const logger = createLogger({ name: 'http-test', level: 'silent' });
    const other = createHttpApp({ logger, registry: new Registry(), defaultEnvelope: msgEnvelope });
    other.use((_req, _res, next) => next());
    expect(() => serveExactRoutes(other, [])).to.throw(/right after createHttpApp/);
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

describe('StatementCache (real Postgres)', () => {
  it('sends the text db.raw sends, with its values (arrays too), and gives the rows; refuses what changes the text; passes errors on', async () => {
    const db = createDb({ url: testEnv().databaseUrl, poolMax: 2 });
    try {
      const statements = new StatementCache(db);
      const sql = 'select n, ?::text as tag from unnest(?::int[]) as n where n > ? order by n';
      expect(statements.text(sql, ['t', [1, 2, 3], 1])).to.equal(db.raw(sql, ['t', [1, 2, 3], 1]).toSQL().toNative().sql);
      expect(await statements.rows(sql, ['x', [3, 1, 2], 1])).to.deep.equal([
        { n: 2, tag: 'x' },
        { n: 3, tag: 'x' },
      ]);
      // The same text again, other values: from the cache, the same answer as db.raw.
      const { rows } = await db.raw<{ rows: unknown[] }>(sql, ['y', [5, 4], 4]);
      expect(await statements.rows(sql, ['y', [5, 4], 4])).to.deep.equal(rows);
      expect(() => statements.text('select ?? from pg_class', ['relname'])).to.throw(/identifiers and raws/);
      let err: unknown;
      await statements.rows('select 1 / ?::int', [0]).catch((e) => (err = e));
      expect((err as { code?: string }).code).to.equal('22012'); // division_by_zero
      // The connection went back to the pool (2 of them): more statements than connections still run.
      expect(await Promise.all([1, 2, 3, 4].map((i) => statements.rows<{ v: number }>('select ?::int as v', [i])))).to.deep.equal([[{ v: 1 }], [{ v: 2 }], [{ v: 3 }], [{ v: 4 }]]);
    } finally {
      await db.destroy();
    }
  });
});
