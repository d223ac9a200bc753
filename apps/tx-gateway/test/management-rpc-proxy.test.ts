import { expect } from 'chai';
import { KNOWN_NETWORK_NAMES } from '@chainpipe/chains';
import { OriginError } from '@chainpipe/upstreams';
import { loadContracts } from '@chainpipe/contracts';
import { messageEnvelope, msgEnvelope } from '@chainpipe/http';
import { managementEnvelopeFor } from '../src/management/envelopes';
import { proxyFailure, resolveChainNet } from '../src/management/rpc-proxy';

describe('rpc proxy decisions', () => {
  it('x-chain-net: missing or blank → 500, unknown → 400, known in any case → the network', () => {
    expect(resolveChainNet(undefined)).to.deep.equal({ ok: false, status: 500, message: 'x-chain-net header required' });
    expect(resolveChainNet('  ')).to.deep.equal({ ok: false, status: 500, message: 'x-chain-net header required' });
    expect(resolveChainNet('dogecoin-mainnet')).to.deep.equal({ ok: false, status: 400, message: 'unknown network "dogecoin-mainnet" in x-chain-net' });
    for (const name of KNOWN_NETWORK_NAMES) {
      const r = resolveChainNet(` ${name.toUpperCase()} `);
      expect(r.ok && r.network.network, name).to.equal(name);
    }
  });

  it('origin failures: a refused call 400 and a node failure 502, both with its code and message, timeout 504, the rest 502 without internals', () => {
    expect(proxyFailure(new OriginError('origin error -32601: the method eth_foo does not exist', 'rpc', { code: -32601, message: 'the method eth_foo does not exist' }))).to.deep.equal({
      status: 400,
      message: 'origin error -32601: the method eth_foo does not exist',
      outcome: 'rpc_error',
    });
    expect(proxyFailure(new OriginError('origin error -32602: invalid params', 'rpc', { code: -32602, message: 'invalid params' })).status).to.equal(400);
    expect(proxyFailure(new OriginError('origin error -32000: header not found', 'rpc', { code: -32000, message: 'header not found' }))).to.deep.equal({
      status: 502,
      message: 'origin error -32000: header not found',
      outcome: 'rpc_error',
    });
    expect(proxyFailure(new OriginError('origin did not answer eth_x within 1000 ms', 'timeout'))).to.deep.equal({ status: 504, message: 'origin did not answer eth_x within 1000 ms', outcome: 'timeout' });
    expect(proxyFailure(new OriginError('origin unreachable: connect ECONNREFUSED 10.0.0.7:8545', 'unreachable'))).to.deep.equal({ status: 502, message: 'origin unreachable', outcome: 'unreachable' });
    expect(proxyFailure(new OriginError('origin answered HTTP 429', 'http'))).to.deep.equal({ status: 502, message: 'origin answered HTTP 429', outcome: 'http_error' });
    expect(proxyFailure(new Error('boom'))).to.deep.equal({ status: 502, message: 'origin call failed', outcome: 'failed' });
    const long = proxyFailure(new OriginError('x', 'rpc', { code: 3, message: 'r'.repeat(5000) }));
    expect(long.message.length).to.equal(500);
  });

  it('body schema: method name shape and params type; defaults filled in', () => {
    const contracts = loadContracts();
    const v = (b: unknown) => contracts.validate('http/tx/rpc-proxy', b);
    const empty: Record<string, unknown> = {};
    expect(v(empty)).to.deep.equal({ ok: true });
    expect(empty).to.deep.equal({ method: 'eth_blockNumber', params: [] });
    expect(v({ jsonrpc: '2.0', id: 7, method: 'getSlot', params: [{ commitment: 'finalized' }] })).to.deep.equal({ ok: true });
    expect(v({ method: 'eth_call; drop' })).to.deep.equal({ ok: false, errors: 'method must match pattern "^[A-Za-z0-9_]{1,100}$"' });
    expect(v({ method: 'a'.repeat(101) })).to.deep.equal({ ok: false, errors: 'method must match pattern "^[A-Za-z0-9_]{1,100}$"' });
    expect(v({ method: 5 })).to.deep.equal({ ok: false, errors: 'method must be string' });
    expect(v({ params: { a: 1 } })).to.deep.equal({ ok: false, errors: 'params must be array' });
    expect(v({ extra: 1 })).to.deep.equal({ ok: false, errors: 'extra is not allowed' });
  });
});

describe('management envelopes by path', () => {
  it('message for addresses and app config (both layouts), msg for the RPC proxy, nothing for other groups', () => {
    for (const p of ['/tx/api/v1/addresses', '/tx/api/v1/addresses/contains', '/TX/API/V1/Addresses/', '/api/v1/address', '/api/v1/address/add', '/tx/api/v1/app/config', '/tx/api/v1/app/webhook/retry/status']) {
      expect(managementEnvelopeFor(p), p).to.equal(messageEnvelope);
    }
    for (const p of ['/api/v1/rpcproxy', '/tx/api/v1/rpcproxy', '/tx/api/v1/rpcproxy/']) expect(managementEnvelopeFor(p), p).to.equal(msgEnvelope);
    for (const p of ['/tx/api/v1/transfers/search', '/api/v1/addressbook', '/tx/api/v1/application', '/api/v1/transfer', '/']) expect(managementEnvelopeFor(p), p).to.equal(undefined);
  });
});
