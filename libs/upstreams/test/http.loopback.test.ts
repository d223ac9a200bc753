import { expect } from 'chai';
import { NOT_JSON, upstreamCall, UpstreamError, upstreamJson, upstreamMessageOf, upstreamUrl, type UpstreamErrorKind } from '../src';
import { answerJson, rejectionOf, freePort, startHttpStub, type HttpStub } from '@chainpipe/testing';

/** The UpstreamError a call rejects with, and how long it took to reject. */
async function failure(call: Promise<unknown>): Promise<{ err: UpstreamError; ms: number }> {
  const t0 = Date.now();
  const err = await rejectionOf(call, UpstreamError);
  return { err, ms: Date.now() - t0 };
}

function expectKind(err: UpstreamError, kind: UpstreamErrorKind): void {
  expect(err.kind, err.message).to.equal(kind);
}

describe('upstream HTTP core', () => {
  let server: HttpStub;

  before(async () => {
    server = await startHttpStub({
      '/echo': (req, res, body) =>
        answerJson(res, 200, { method: req.method, url: req.url, contentType: req.headers['content-type'] ?? null, key: req.headers['x-api-key'] ?? null, accept: req.headers.accept ?? null, userAgent: req.headers['user-agent'] ?? null, body }),
      '/moved': (_req, res) => res.writeHead(302, { location: '/echo' }).end(),
      '/never': () => undefined, // no answer at all
      '/stalled-body': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":'); // headers and half a body, then nothing
      },
      '/rate-limited': (_req, res) => answerJson(res, 429, { message: 'rate limit exceeded, retry in 60 s' }),
      '/gecko-404': (_req, res) => answerJson(res, 404, { errors: [{ status: '404', title: 'Not Found' }] }),
      '/html-502': (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'),
      '/empty-503': (_req, res) => res.writeHead(503).end(),
      '/not-json': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('OK'),
      '/large-declared': (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' }).end(`"${'x'.repeat(4094)}"`),
      '/large-streamed': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length said up front
        for (let i = 0; i < 8; i++) res.write('x'.repeat(1024));
        res.end();
      },
    });
  });

  after(() => server.close());

  it('sends the query, the headers and a JSON body, and resolves with the parsed answer', async () => {
    const body = (await upstreamJson({
      url: upstreamUrl(`${server.url}/`, '/echo'),
      query: { ids: '1,2', convert: 'USD' },
      headers: { 'x-api-key': 'k1' },
      json: { amount: '10' },
      timeoutMs: 2000,
    })) as Record<string, unknown>;
    expect(body).to.deep.equal({ method: 'POST', url: '/echo?ids=1%2C2&convert=USD', contentType: 'application/json', key: 'k1', accept: '*/*', userAgent: 'chainpipe', body: '{"amount":"10"}' });
    const get = (await upstreamJson({ url: `${server.url}/echo`, timeoutMs: 2000 })) as Record<string, unknown>;
    expect(get).to.include({ method: 'GET', contentType: null, body: '' });
  });

  it('the caller\'s own accept and user agent win over the defaults', async () => {
    const body = (await upstreamJson({ url: `${server.url}/echo`, headers: { accept: 'application/json', 'user-agent': 'provider-sdk/1' }, timeoutMs: 2000 })) as Record<string, unknown>;
    expect(body).to.include({ accept: 'application/json', userAgent: 'provider-sdk/1' });
  });

  it('a redirect is not followed: the 3xx is the answer, an http failure for upstreamJson', async () => {
    const received = server.received.length;
    const { err } = await failure(upstreamJson({ url: `${server.url}/moved`, headers: { 'x-api-key': 'k1' }, timeoutMs: 2000 }));
    expect([err.kind, err.status]).to.deep.equal(['http', 302]);
    expect(server.received.slice(received).map((r) => r.url), 'the key went nowhere else').to.deep.equal(['/moved']);
  });

  it('an upstream that never answers is a timeout, within the deadline', async () => {
    const { err, ms } = await failure(upstreamJson({ url: `${server.url}/never`, timeoutMs: 300 }));
    expectKind(err, 'timeout');
    expect(err.message).to.equal('did not answer within 300 ms');
    expect(ms).to.be.within(250, 1500);
  });

  it('an answer whose body stalls is a timeout too: the deadline covers the body', async () => {
    const { err, ms } = await failure(upstreamCall({ url: `${server.url}/stalled-body`, timeoutMs: 300 }));
    expectKind(err, 'timeout');
    expect(ms).to.be.within(250, 1500);
  });

  it('a refused connection is unreachable, with the socket error in the message', async () => {
    const { err } = await failure(upstreamJson({ url: `http://127.0.0.1:${await freePort()}/x`, timeoutMs: 2000 }));
    expectKind(err, 'unreachable');
    expect(err.message).to.match(/^unreachable: .*ECONNREFUSED/);
  });

  it('a non-2xx is http with the status and the upstream\'s own message', async () => {
    const { err } = await failure(upstreamJson({ url: `${server.url}/rate-limited`, timeoutMs: 2000 }));
    expectKind(err, 'http');
    expect(err.status).to.equal(429);
    expect(err.upstreamMessage).to.equal('rate limit exceeded, retry in 60 s');
    expect(err.message).to.equal('answered HTTP 429: rate limit exceeded, retry in 60 s');

    const notFound = (await failure(upstreamJson({ url: `${server.url}/gecko-404`, timeoutMs: 2000 }))).err;
    expect([notFound.kind, notFound.status, notFound.upstreamMessage]).to.deep.equal(['http', 404, 'Not Found']);
  });

  it('a non-2xx that is not JSON is http too, with the start of its text', async () => {
    const html = (await failure(upstreamJson({ url: `${server.url}/html-502`, timeoutMs: 2000 }))).err;
    expect([html.kind, html.status, html.upstreamMessage]).to.deep.equal(['http', 502, '<html>Bad Gateway</html>']);
    const empty = (await failure(upstreamJson({ url: `${server.url}/empty-503`, timeoutMs: 2000 }))).err;
    expect([empty.kind, empty.status, empty.upstreamMessage, empty.message]).to.deep.equal(['http', 503, undefined, 'answered HTTP 503']);
  });

  it('a 2xx that is not JSON is invalid', async () => {
    const { err } = await failure(upstreamJson({ url: `${server.url}/not-json`, timeoutMs: 2000 }));
    expectKind(err, 'invalid');
    expect(err.status).to.equal(200);
  });

  it('upstreamCall answers any status with its text, for callers that read the status themselves', async () => {
    const answer = await upstreamCall({ url: `${server.url}/gecko-404`, timeoutMs: 2000 });
    expect(answer).to.deep.equal({ status: 404, ok: false, text: '{"errors":[{"status":"404","title":"Not Found"}]}' });
  });

  it('the caller\'s abort ends the call at once as aborted, not timeout', async () => {
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 100);
    const { err, ms } = await failure(upstreamJson({ url: `${server.url}/never`, timeoutMs: 5000, signal: caller.signal }));
    expectKind(err, 'aborted');
    expect(ms).to.be.below(1000);

    const received = server.received.length;
    const already = (await failure(upstreamJson({ url: `${server.url}/echo`, timeoutMs: 5000, signal: AbortSignal.abort() }))).err;
    expectKind(already, 'aborted');
    expect(server.received.length, 'an already aborted call sends nothing').to.equal(received);
  });

  it('an answer larger than the limit is invalid, whether its length is declared or streamed', async () => {
    const declared = (await failure(upstreamCall({ url: `${server.url}/large-declared`, timeoutMs: 2000, maxBytes: 1024 }))).err;
    expectKind(declared, 'invalid');
    expect(declared.message).to.equal('answered more than 1024 bytes');
    const streamed = (await failure(upstreamCall({ url: `${server.url}/large-streamed`, timeoutMs: 2000, maxBytes: 4096 }))).err;
    expectKind(streamed, 'invalid');
    // Under the limit the same answers come whole.
    expect((await upstreamCall({ url: `${server.url}/large-streamed`, timeoutMs: 2000, maxBytes: 8192 })).text).to.have.length(8192);
  });
});

describe('upstreamMessageOf', () => {
  it('reads the message shapes of the upstreams', () => {
    expect(upstreamMessageOf({ message: 'bad pair' }, '')).to.equal('bad pair');
    expect(upstreamMessageOf({ error: 'invalid_app_id' }, '')).to.equal('invalid_app_id');
    expect(upstreamMessageOf({ error: { code: -32601, message: 'Method not found' } }, '')).to.equal('Method not found');
    expect(upstreamMessageOf({ status: { error_code: 1002, error_message: 'API key missing.' } }, '')).to.equal('API key missing.');
    expect(upstreamMessageOf({ errors: [{ status: '422', title: 'Unprocessable', detail: 'bad address' }] }, '')).to.equal('bad address');
    expect(upstreamMessageOf(NOT_JSON, `${'y'.repeat(300)}`)).to.have.length(200);
  });

  it('says nothing when the upstream said nothing usable', () => {
    expect(upstreamMessageOf({ data: [] }, '{"data":[]}')).to.equal(undefined);
    expect(upstreamMessageOf({ message: 42, error: true }, '')).to.equal(undefined);
    expect(upstreamMessageOf([1, 2], '[1,2]')).to.equal(undefined);
    expect(upstreamMessageOf(NOT_JSON, '   ')).to.equal(undefined);
  });
});
