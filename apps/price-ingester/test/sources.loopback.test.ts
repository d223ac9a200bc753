import { expect } from 'chai';
import { RetryableError } from '@chainpipe/runtime';
import { answerJson, rejectionOf, freePort, startHttpStub, type HttpStub } from '@chainpipe/testing';
import { getJson } from '../src/sources';

const retryable = (call: Promise<unknown>) => rejectionOf(call, RetryableError);

describe('price sources: getJson, every failure a RetryableError with its UPSTREAM_* code', () => {
  let stub: HttpStub;

  before(async () => {
    stub = await startHttpStub({
      '/v2/cryptocurrency/quotes/latest': (req, res) => answerJson(res, 200, { key: req.headers['x-cmc_pro_api_key'], accept: req.headers.accept }),
      '/limited': (_req, res) => answerJson(res, 429, { status: { error_code: 1008, error_message: "You've exceeded your API Key's HTTP request rate limit." } }),
      '/html': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>'),
      '/silent': () => undefined,
    });
  });

  after(() => stub.close());

  it('answers the parsed JSON, sent with the source\'s headers', async () => {
    expect(await getJson(`${stub.url}/v2/cryptocurrency/quotes/latest?id=1`, { timeoutMs: 2000, headers: { 'X-CMC_PRO_API_KEY': 'k' } })).to.deep.equal({ key: 'k', accept: 'application/json' });
  });

  it('non-2xx is UPSTREAM_HTTP with the source\'s message, non-JSON UPSTREAM_NOT_JSON', async () => {
    const http = await retryable(getJson(`${stub.url}/limited`, { timeoutMs: 2000 }));
    expect([http.code, http.message]).to.deep.equal(['UPSTREAM_HTTP', "upstream answered HTTP 429: You've exceeded your API Key's HTTP request rate limit."]);
    expect((await retryable(getJson(`${stub.url}/html`, { timeoutMs: 2000 }))).code).to.equal('UPSTREAM_NOT_JSON');
  });

  it('no answer in time and a refused connection are both UPSTREAM_UNREACHABLE', async () => {
    const slow = await retryable(getJson(`${stub.url}/silent`, { timeoutMs: 200 }));
    expect([slow.code, slow.message]).to.deep.equal(['UPSTREAM_UNREACHABLE', 'upstream did not answer within 200 ms']);
    const refused = await retryable(getJson(`http://127.0.0.1:${await freePort()}/x`, { timeoutMs: 2000 }));
    expect(refused.code).to.equal('UPSTREAM_UNREACHABLE');
  });
});
