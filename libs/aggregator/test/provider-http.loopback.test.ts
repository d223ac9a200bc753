import { expect } from 'chai';
import { answerJson, rejectionOf, startHttpStub, type HttpStub } from '@chainpipe/testing';
import { ProviderError } from '../src';
import { providerJson } from '../src/provider-http';

const providerFailure = (call: Promise<unknown>) => rejectionOf(call, ProviderError);

describe('providerJson: one provider call, every failure a ProviderError', () => {
  let stub: HttpStub;

  before(async () => {
    stub = await startHttpStub({
      '/api/v2/estimate': (req, res, body) => answerJson(res, 200, { url: req.url, key: req.headers['x-changenow-api-key'], body }),
      '/api/v2/halted': (_req, res) => answerJson(res, 503, { error: 'trading is halted' }),
      '/api/v2/list': (_req, res) => answerJson(res, 200, [1, 2]),
      '/api/v2/slow': () => undefined,
    });
  });

  after(() => stub.close());

  it('joins base URL, path and query, sends the headers and the JSON body, and answers the object', async () => {
    const answer = await providerJson('changenow', {
      baseUrl: `${stub.url}/api/`, path: '/v2/estimate', query: { fromCurrency: 'eth' }, method: 'POST', headers: { 'x-changenow-api-key': 'k' }, body: { a: 1 }, timeoutMs: 2000,
    });
    expect(answer).to.deep.equal({ url: '/api/v2/estimate?fromCurrency=eth', key: 'k', body: '{"a":1}' });
  });

  it('a non-2xx carries its status and the provider\'s own text', async () => {
    const err = await providerFailure(providerJson('thorchain', { baseUrl: `${stub.url}/api`, path: '/v2/halted', timeoutMs: 2000 }));
    expect([err.provider, err.status, err.kind, err.message]).to.deep.equal(['thorchain', 503, 'http', 'thorchain: answered HTTP 503: trading is halted']);
  });

  it('JSON that is not an object is invalid', async () => {
    const err = await providerFailure(providerJson('thorchain', { baseUrl: `${stub.url}/api`, path: '/v2/list', timeoutMs: 2000 }));
    expect([err.status, err.kind]).to.deep.equal([200, 'invalid']);
  });

  it('the provider\'s own deadline is a timeout; the caller\'s signal is an abort', async () => {
    const slow = await providerFailure(providerJson('thorchain', { baseUrl: `${stub.url}/api`, path: '/v2/slow', timeoutMs: 200 }));
    expect([slow.kind, slow.message]).to.deep.equal(['timeout', 'thorchain: did not answer within 200 ms']);
    const left = await providerFailure(providerJson('thorchain', { baseUrl: `${stub.url}/api`, path: '/v2/slow', timeoutMs: 5000, signal: AbortSignal.timeout(100) }));
    expect(left.kind).to.equal('aborted');
  });
});
