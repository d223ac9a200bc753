import { expect } from 'chai';
import express from 'express';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { ApiRoutes, createHttpApp, finishHttpApp, listen, msgEnvelope, sendOk, type StartedServer } from '@chainpipe/http';
import { createLogger } from '@chainpipe/runtime';
import { readJson } from '@chainpipe/testing';

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
