import { expect } from 'chai';
import { jsonRpcCall, OriginError } from '../src';
import { answerJson, rejectionOf, freePort, startHttpStub, type HttpStub } from '@chainpipe/testing';

const originFailure = (call: Promise<unknown>) => rejectionOf(call, OriginError);

describe('jsonRpcCall', () => {
  let server: HttpStub;

  before(async () => {
    server = await startHttpStub({
      '/evm': (_req, res, body) => answerJson(res, 200, { jsonrpc: '2.0', id: JSON.parse(body).id, result: '0x10430e0' }),
      // Bitcoin Core: a failed call is HTTP 500 with the JSON-RPC error as its body.
      '/bitcoin': (_req, res, body) => answerJson(res, 500, { result: null, error: { code: -5, message: 'No such mempool or blockchain transaction.' }, id: JSON.parse(body).id }),
      '/limited': (_req, res) => res.writeHead(429, { 'content-type': 'text/plain' }).end('Too Many Requests'),
      '/not-json': (_req, res) => res.writeHead(200).end('<html>'),
      '/no-result': (_req, res) => answerJson(res, 200, { jsonrpc: '2.0', id: 1 }),
      '/never': () => undefined,
    });
  });

  after(() => server.close());

  it('posts a JSON-RPC 2.0 request with the caller\'s headers and resolves with `result`', async () => {
    expect(await jsonRpcCall(`${server.url}/evm`, 'eth_blockNumber', [], 2000, { authorization: 'Bearer t' })).to.equal('0x10430e0');
    const sent = server.received.at(-1)!;
    expect(sent.method).to.equal('POST');
    expect(sent.headers).to.include({ 'content-type': 'application/json', authorization: 'Bearer t' });
    const request = JSON.parse(sent.body);
    expect(request).to.include({ jsonrpc: '2.0', method: 'eth_blockNumber' });
    expect(request.params).to.deep.equal([]);
    expect(request.id).to.be.a('number');
  });

  it('a JSON-RPC error body wins over the HTTP status (Bitcoin Core\'s 500)', async () => {
    const err = await originFailure(jsonRpcCall(`${server.url}/bitcoin`, 'getrawtransaction', ['00'], 2000));
    expect(err.kind).to.equal('rpc');
    expect(err.rpcError).to.deep.equal({ code: -5, message: 'No such mempool or blockchain transaction.' });
    expect(err.message).to.equal('origin error -5: No such mempool or blockchain transaction.');
  });

  it('maps every other failure to its kind', async () => {
    const http = await originFailure(jsonRpcCall(`${server.url}/limited`, 'eth_call', [], 2000));
    expect([http.kind, http.message]).to.deep.equal(['http', 'origin answered HTTP 429']);
    const notJson = await originFailure(jsonRpcCall(`${server.url}/not-json`, 'eth_call', [], 2000));
    expect([notJson.kind, notJson.message]).to.deep.equal(['invalid', 'origin answered something that is not JSON']);
    const noResult = await originFailure(jsonRpcCall(`${server.url}/no-result`, 'eth_call', [], 2000));
    expect([noResult.kind, noResult.message]).to.deep.equal(['invalid', 'origin answered without a result']);
    const slow = await originFailure(jsonRpcCall(`${server.url}/never`, 'getblockcount', [], 200));
    expect([slow.kind, slow.message]).to.deep.equal(['timeout', 'origin did not answer getblockcount within 200 ms']);
    const refusedUrl = `http://127.0.0.1:${await freePort()}`;
    const down = await originFailure(jsonRpcCall(`${refusedUrl}/rpc`, 'eth_call', [], 2000));
    expect(down.kind).to.equal('unreachable');
    expect(down.message).to.match(/^origin unreachable: .*ECONNREFUSED/);
  });
});
