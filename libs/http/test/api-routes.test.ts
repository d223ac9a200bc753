import { expect } from 'chai';
import express from 'express';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { createLogger } from '@chainpipe/runtime';
import {
  ApiRoutes,
  compareRoutesWithDocument,
  createHttpApp,
  finishHttpApp,
  messageEnvelope,
  msgEnvelope,
  openApiDocument,
  serveApiDocs,
  type EnvelopeStyle,
} from '@chainpipe/http';

const contracts = loadContracts();
const logger = createLogger({ name: 'api-routes-test', level: 'silent' });
const noop: express.RequestHandler = (_req, res) => res.end();
const INFO = { title: 't', version: '1' };
const ok = { data: { const: 'success' }, description: 'done' };

describe('ApiRoutes and the OpenAPI document', () => {
  it('refuses path parameters without a params schema, unknown auth, unknown schemas and duplicates', () => {
    const api = new ApiRoutes({ contracts, jsonBody: express.json() });
    expect(() => api.route({ method: 'get', path: '/x/:id', summary: 's', auth: 'none', ok }, noop)).to.throw(/need a request.params or request.path schema/);
    expect(() => api.route({ method: 'get', path: '/x/:id', summary: 's', auth: 'none', request: { params: 'http/tx/queries-transaction' }, ok }, noop)).to.throw(/id are not in/);
    expect(() => api.route({ method: 'get', path: '/y', summary: 's', auth: 'apiKey', ok }, noop)).to.throw(/unknown auth/);
    // The typecheck refuses an id that names no schema; the check at boot still catches one that slips past it.
    // @ts-expect-error 'http/nope' is not a SchemaId
    expect(() => api.route({ method: 'post', path: '/y', summary: 's', auth: 'none', request: { body: 'http/nope' }, ok }, noop)).to.throw(/unknown schema http\/nope/);
    api.route({ method: 'get', path: '/y', summary: 's', auth: 'none', ok }, noop);
    expect(() => api.route({ method: 'get', path: '/Y', summary: 's', auth: 'none', ok }, noop)).to.throw(/declared twice/);
  });

  it('turns a merged params schema into path and query parameters, and a body schema into a component with its refs', () => {
    const api = new ApiRoutes({ contracts, jsonBody: express.json() });
    api.route({ method: 'get', path: '/tx/:tx_hash', summary: 's', auth: 'none', request: { params: 'http/tx/queries-transaction' }, ok: { data: { anyOf: [{ $ref: 'common/tx-v2-record' }, { type: 'null' }] }, description: 'd' } }, noop);
    const doc = openApiDocument(api, INFO, () => msgEnvelope);
    const op = doc.paths['/tx/{tx_hash}'].get;
    // queries-transaction: tx_hash, chain_type, chain_id required; no_cache optional.
    expect(op.parameters!.map((p) => [p.name, p.in, p.required])).to.deep.equal([
      ['tx_hash', 'path', true],
      ['chain_type', 'query', true],
      ['chain_id', 'query', true],
      ['no_cache', 'query', false],
    ]);
    // The inline data schema names common/tx-v2-record, which refers to normalized-tx#/properties/…:
    // both pulled in, refs rewritten into the components.
    expect(doc.paths['/tx/{tx_hash}'].get.responses['200'].content!['application/json'].schema.properties).to.have.nested.property('data.anyOf[0].$ref', '#/components/schemas/common.tx-v2-record');
    const v2 = JSON.stringify(doc.components.schemas['common.tx-v2-record']);
    expect(v2).to.include('"#/components/schemas/common.normalized-tx/properties/token_transfers"');
    expect(doc.components.schemas).to.have.property('common.normalized-tx');
    expect(JSON.stringify(doc.components.schemas)).to.not.match(/"\$id"|"\$schema"|"\.\.\//);
  });

  it('documents separate path and query schemas in their places', () => {
    const api = new ApiRoutes({ contracts });
    api.route({ method: 'get', path: '/m/:network/:address', summary: 's', auth: 'none', request: { path: 'http/kline/market-path', query: 'http/kline/market-pool-query' }, ok }, noop);
    expect(() => api.route({ method: 'get', path: '/n/:other', summary: 's', auth: 'none', request: { path: 'http/kline/market-path' }, ok }, noop)).to.throw(/other are not in http\/kline\/market-path/);
    const params = openApiDocument(api, INFO, () => msgEnvelope).paths['/m/{network}/{address}'].get.parameters!;
    const pathNames = params.filter((p) => p.in === 'path').map((p) => p.name);
    expect(pathNames).to.deep.equal(['network', 'address']);
    const queryNames = params.filter((p) => p.in === 'query').map((p) => p.name);
    expect(queryNames).to.deep.equal(Object.keys(contracts.schema('http/kline/market-pool-query').properties as object));
  });

  it('reads the envelope schema off the style, so a new style needs no schema of its own', () => {
    const emptyStringOnError: EnvelopeStyle = {
      name: 'price',
      ok: (data, code, message) => ({ code, msg: message, data }),
      error: (_status, code, message) => ({ code, msg: message, data: '' }),
    };
    const api = new ApiRoutes({ contracts });
    api.route({ method: 'get', path: '/p', summary: 's', auth: 'none', ok: { ...ok, code: 20000, example: 'success' } }, noop);
    const doc = openApiDocument(api, INFO, () => emptyStringOnError);
    const body = doc.paths['/p'].get.responses['200'].content!['application/json'];
    expect(body.schema).to.deep.equal({
      type: 'object',
      required: ['code', 'msg', 'data'],
      properties: { code: { const: 20000 }, msg: { type: 'string' }, data: { const: 'success' } },
    });
    expect(body.example).to.deep.equal({ code: 20000, msg: 'success', data: 'success' });
    expect(doc.components.schemas['error-envelope.price']).to.deep.equal({
      type: 'object',
      required: ['code', 'msg', 'data'],
      properties: { code: { type: 'integer' }, msg: { type: 'string' }, data: { const: '' } },
    });
  });

  it('finishHttpApp refuses an app serving a route its document lacks, naming it', () => {
    const app = createHttpApp({ logger, registry: new Registry(), defaultEnvelope: messageEnvelope });
    const api = new ApiRoutes({ contracts });
    api.route({ method: 'get', path: '/documented', summary: 's', auth: 'none', ok }, noop);
    app.use(api.router);
    const side = express.Router();
    side.delete('/hidden/:id', noop);
    app.use('/nested', side);
    const doc = serveApiDocs(app, api, INFO);
    expect(compareRoutesWithDocument(app, doc)).to.deep.equal({ undocumented: ['DELETE /nested/hidden/{id}'], missing: [] });
    expect(() => finishHttpApp(app, logger)).to.throw(/undocumented route DELETE \/nested\/hidden\/\{id\}/);
  });

  it('reports a documented route the app does not serve', () => {
    const app = createHttpApp({ logger, registry: new Registry(), defaultEnvelope: messageEnvelope });
    const api = new ApiRoutes({ contracts });
    api.route({ method: 'get', path: '/documented', summary: 's', auth: 'none', ok }, noop);
    // The router is never mounted.
    const doc = serveApiDocs(app, api, INFO);
    expect(compareRoutesWithDocument(app, doc)).to.deep.equal({ undocumented: [], missing: ['GET /documented'] });
  });
});
