import { expect } from 'chai';
import { RpcError, answerJsonRpc, invalidParams, type RpcDialect, type RpcHandler, type RpcNode } from '../src/json-rpc';

function node(dialect: RpcDialect, methods: Record<string, RpcHandler>): RpcNode {
  return { dialect, methods: new Map(Object.entries(methods)), methodNotFoundMessage: (m) => `no ${m}` };
}

const echo = node('jsonrpc2', {
  echo: (params) => params ?? null,
  nothing: () => undefined,
  fail: () => {
    throw invalidParams('bad argument');
  },
  custom: () => {
    throw new RpcError(-32000, 'header not found', { hint: 1 });
  },
  crash: () => {
    throw new TypeError('boom');
  },
});

const parse = (body: string | null) => (body === null ? null : JSON.parse(body));

describe('JSON-RPC 2.0 answers', () => {
  it('answers a call with its id and result, and undefined results as null', () => {
    const r = answerJsonRpc(echo, JSON.stringify({ jsonrpc: '2.0', id: 'a-1', method: 'echo', params: [1, { x: 2 }] }));
    expect(r.status).to.equal(200);
    expect(parse(r.body)).to.deep.equal({ jsonrpc: '2.0', id: 'a-1', result: [1, { x: 2 }] });
    expect(parse(answerJsonRpc(echo, '{"jsonrpc":"2.0","id":0,"method":"nothing"}').body)).to.deep.equal({ jsonrpc: '2.0', id: 0, result: null });
    expect(r.calls).to.deep.equal([{ method: 'echo', outcome: 'ok' }]);
  });

  it('answers -32700 with id null to a body that is not JSON', () => {
    for (const body of ['', '{"jsonrpc":', 'nonsense', '\u0000\u0001']) {
      const r = answerJsonRpc(echo, body);
      expect(r.status).to.equal(200);
      expect(parse(r.body)).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
  });

  it('answers -32600 to requests that are not JSON-RPC 2.0, keeping a valid id', () => {
    const cases: [unknown, unknown][] = [
      [5, null],
      ['text', null],
      [null, null],
      [{ id: 1, method: 'echo' }, 1],
      [{ jsonrpc: '1.0', id: 2, method: 'echo' }, 2],
      [{ jsonrpc: '2.0', id: 3, method: 7 }, 3],
      [{ jsonrpc: '2.0', id: 4, method: 'echo', params: 'x' }, 4],
      [{ jsonrpc: '2.0', id: { nested: true }, method: 'echo' }, null],
    ];
    for (const [request, id] of cases) {
      const reply = parse(answerJsonRpc(echo, JSON.stringify(request)).body);
      expect(reply.error.code, JSON.stringify(request)).to.equal(-32600);
      expect(reply.id).to.equal(id);
      expect(reply).to.not.have.property('result');
    }
  });

  it('answers -32601 for unknown methods, also for names of Object.prototype', () => {
    for (const method of ['eth_nothing', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const reply = parse(answerJsonRpc(echo, JSON.stringify({ jsonrpc: '2.0', id: 9, method })).body);
      expect(reply, method).to.deep.equal({ jsonrpc: '2.0', id: 9, error: { code: -32601, message: `no ${method}` } });
    }
  });

  it('answers -32602 and custom errors from handlers, and hides internal failures behind -32603', () => {
    expect(parse(answerJsonRpc(echo, '{"jsonrpc":"2.0","id":1,"method":"fail"}').body).error).to.deep.equal({ code: -32602, message: 'bad argument' });
    expect(parse(answerJsonRpc(echo, '{"jsonrpc":"2.0","id":1,"method":"custom"}').body).error).to.deep.equal({ code: -32000, message: 'header not found', data: { hint: 1 } });
    const crash = answerJsonRpc(echo, '{"jsonrpc":"2.0","id":1,"method":"crash"}');
    expect(parse(crash.body).error).to.deep.equal({ code: -32603, message: 'Internal error' });
    expect(crash.calls[0].outcome).to.equal('internal_error');
    expect((crash.calls[0].error as Error).message).to.equal('boom');
  });

  it('answers batches element by element in order, leaving notifications out', () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'echo', params: ['a'] },
      { jsonrpc: '2.0', method: 'echo', params: ['notification'] },
      { jsonrpc: '2.0', id: 2, method: 'missing' },
      42,
      { jsonrpc: '2.0', id: 3, method: 'fail' },
    ];
    const r = answerJsonRpc(echo, JSON.stringify(batch));
    expect(r.status).to.equal(200);
    expect(parse(r.body)).to.deep.equal([
      { jsonrpc: '2.0', id: 1, result: ['a'] },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'no missing' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
      { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'bad argument' } },
    ]);
    expect(r.calls).to.have.length(5);
  });

  it('sends nothing (204) for a notification or a batch of notifications, and refuses empty and oversized batches', () => {
    expect(answerJsonRpc(echo, '{"jsonrpc":"2.0","method":"echo"}')).to.include({ status: 204, body: null });
    expect(answerJsonRpc(echo, '[{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","method":"fail"}]')).to.include({ status: 204, body: null });
    expect(parse(answerJsonRpc(echo, '[]').body)).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: empty batch' } });
    const big = JSON.stringify(Array.from({ length: 4 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'echo' })));
    const r = answerJsonRpc(echo, big, { maxBatch: 3 });
    expect(parse(r.body).error.code).to.equal(-32600);
    expect(parse(r.body).error.message).to.match(/batch of 4 calls exceeds the limit of 3/);
  });

  it('fails every known call with the forced error, unknown methods still with -32601', () => {
    const forcedError = { code: -32603, message: 'simulated' };
    const r = answerJsonRpc(echo, '[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"nope"}]', { forcedError });
    expect(parse(r.body)).to.deep.equal([
      { jsonrpc: '2.0', id: 1, error: forcedError },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'no nope' } },
    ]);
  });
});

describe('Bitcoin Core JSON-RPC answers', () => {
  const core = node('bitcoin-core', {
    getblockcount: () => 766393,
    getblock: () => {
      throw new RpcError(-5, 'Block not found');
    },
  });

  it('takes jsonrpc 1.0, 2.0 or none and answers {result, error: null, id}', () => {
    for (const version of ['1.0', '2.0', undefined]) {
      const r = answerJsonRpc(core, JSON.stringify({ jsonrpc: version, id: 'curltest', method: 'getblockcount', params: [] }));
      expect(r.status).to.equal(200);
      expect(parse(r.body)).to.deep.equal({ result: 766393, error: null, id: 'curltest' });
    }
  });

  it('answers a failed single call with HTTP 500, an unknown method with 404 and an invalid request with 400, a batch with 200', () => {
    const failed = answerJsonRpc(core, '{"jsonrpc":"1.0","id":1,"method":"getblock","params":["00"]}');
    expect(failed.status).to.equal(500);
    expect(parse(failed.body)).to.deep.equal({ result: null, error: { code: -5, message: 'Block not found' }, id: 1 });
    const unknown = answerJsonRpc(core, '{"id":1,"method":"getnothing"}');
    expect(unknown.status).to.equal(404);
    expect(parse(unknown.body).error.code).to.equal(-32601);
    expect(answerJsonRpc(core, '{"id":1}').status).to.equal(400);
    expect(answerJsonRpc(core, 'not json').status).to.equal(500);
    const batch = answerJsonRpc(core, '[{"id":1,"method":"getblockcount"},{"id":2,"method":"getblock"}]');
    expect(batch.status).to.equal(200);
    expect(parse(batch.body).map((r: { error: unknown }) => r.error)).to.deep.equal([null, { code: -5, message: 'Block not found' }]);
  });

  it('answers requests without an id too (Core has no notifications) and treats params null as none', () => {
    expect(parse(answerJsonRpc(core, '{"method":"getblockcount","params":null}').body)).to.deep.equal({ result: 766393, error: null, id: null });
  });
});
