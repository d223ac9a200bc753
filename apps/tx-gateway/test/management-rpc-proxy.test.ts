import { expect } from 'chai';
import { KNOWN_NETWORK_NAMES, networkByName, parseChainOrigins } from '@chainpipe/chains';
import { ConfigError, SecretBox, createLogger, systemClock } from '@chainpipe/runtime';
import { Registry } from 'prom-client';
import { createDb } from '@chainpipe/db';
import { OriginError } from '@chainpipe/upstreams';
import { loadContracts } from '@chainpipe/contracts';
import { messageEnvelope, msgEnvelope } from '@chainpipe/http';
import { txGatewayModules } from '../src/modules';
import { proxyAllows } from '../src/management/rpc-methods';
import { methodRefused, proxyFailure, resolveChainNet, rpcProxyOrigins } from '../src/management/rpc-proxy';

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
    expect(proxyFailure(new OriginError('origin answered more than 4096 bytes', 'invalid'))).to.deep.equal({ status: 502, message: 'origin answered more than 4096 bytes', outcome: 'too_large' });
    const long = proxyFailure(new OriginError('x', 'rpc', { code: 3, message: 'r'.repeat(5000) }));
    expect(long.message.length).to.equal(500);
  });

  it('forwards the read-only calls of each family and refuses node control, wallets, broadcasts, whole-state scans and other families\' methods', () => {
    const allowed: [string, string][] = [
      ['evm', 'eth_blockNumber'], ['evm', 'eth_call'], ['evm', 'eth_getLogs'], ['evm', 'eth_getTransactionReceipt'], ['evm', 'net_version'],
      ['tvm', 'eth_getBlockByNumber'], ['utxo', 'getblock'], ['utxo', 'getrawtransaction'], ['utxo', 'estimatesmartfee'],
      ['svm', 'getSlot'], ['svm', 'getTransaction'], ['svm', 'getSignaturesForAddress'], ['svm', 'simulateTransaction'],
    ];
    const refused: [string, string][] = [
      ['evm', 'admin_nodeInfo'], ['evm', 'admin_addPeer'], ['evm', 'debug_traceTransaction'], ['evm', 'personal_sign'], ['evm', 'miner_start'], ['evm', 'txpool_content'],
      ['evm', 'eth_sendRawTransaction'], ['evm', 'eth_sendTransaction'], ['evm', 'eth_sign'], ['evm', 'eth_accounts'], ['evm', 'eth_newFilter'], ['evm', 'eth_subscribe'], ['evm', 'ETH_CALL'],
      ['tvm', 'buildTransaction'], ['tvm', 'admin_peers'],
      ['utxo', 'stop'], ['utxo', 'setban'], ['utxo', 'invalidateblock'], ['utxo', 'scantxoutset'], ['utxo', 'gettxoutsetinfo'], ['utxo', 'verifychain'], ['utxo', 'sendrawtransaction'],
      ['utxo', 'sendtoaddress'], ['utxo', 'dumpprivkey'], ['utxo', 'walletpassphrase'], ['utxo', 'getbalance'], ['utxo', 'addnode'], ['utxo', 'pruneblockchain'], ['utxo', 'GetBlock'], ['utxo', 'eth_blockNumber'],
      ['svm', 'sendTransaction'], ['svm', 'requestAirdrop'], ['svm', 'getProgramAccounts'], ['svm', 'getLargestAccounts'], ['svm', 'eth_blockNumber'],
    ];
    for (const [family, method] of allowed) expect(proxyAllows(family as never, method), `${family} ${method}`).to.equal(true);
    for (const [family, method] of refused) expect(proxyAllows(family as never, method), `${family} ${method}`).to.equal(false);
    expect(methodRefused(networkByName('bitcoin-mainnet')!, 'stop')).to.equal('method stop is not allowed on bitcoin-mainnet: the proxy forwards read-only calls only');
  });

  it('its nodes: RPC_PROXY_URLS where it names the network, the read nodes elsewhere; a bad entry is a config error naming the setting', () => {
    const read = parseChainOrigins('', 'https://read.example/v1');
    const origins = rpcProxyOrigins('ethereum-mainnet=https://proxy.example/eth', read);
    expect(origins.urlFor('ethereum-mainnet')).to.equal('https://proxy.example/eth');
    expect(origins.urlFor('bitcoin-mainnet')).to.equal('https://read.example/v1/bitcoin-mainnet');
    expect(rpcProxyOrigins('', read).urlFor('solana-mainnet')).to.equal('https://read.example/v1/solana-mainnet');
    expect(() => rpcProxyOrigins('moon-mainnet=https://x.example', read)).to.throw(ConfigError, 'RPC_PROXY_URLS names unknown network moon-mainnet');
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

describe('route module envelopes by path', () => {
  // The gateway's modules with inert dependencies (nothing is called; the database is never connected).
  const modules = txGatewayModules({
    db: createDb({ url: 'postgres://127.0.0.1:1/never-connected' }),
    contracts: loadContracts(),
    producer: { publish: () => Promise.reject(new Error('inert')) },
    logger: createLogger({ name: 'envelope-test', level: 'silent' }),
    registry: new Registry(),
    resolveKey: () => Promise.resolve(undefined),
    origins: parseChainOrigins('', null),
    rpcTimeoutMs: 1000,
    rpcProxy: { origins: parseChainOrigins('', null), maxAnswerBytes: 1024 },
    secretBox: new SecretBox('0'.repeat(64)),
    allowPrivateWebhookTargets: false,
    retryWebhooks: () => Promise.reject(new Error('inert')),
    poolTrades: undefined as never,
    clock: systemClock,
    bodyLimitBytes: 1024,
  });
  /** The modules that claim a path's envelope (createModularApp takes the first). */
  const claims = (path: string) => modules.filter((m) => m.envelopeFor(path) !== undefined).map((m) => ({ name: m.name, style: m.envelopeFor(path) }));

  it('message for addresses, app config and pool trades (both layouts), msg for the RPC proxy, the default for queries and push', () => {
    for (const p of ['/tx/api/v1/addresses', '/tx/api/v1/addresses/contains', '/TX/API/V1/Addresses/', '/api/v1/address', '/api/v1/address/add', '/tx/api/v1/app/config', '/tx/api/v1/app/webhook/retry/status', '/tx/api/v1/dex-pools', '/tx/api/v1/dex-pools/0xabc/trades']) {
      expect(claims(p).map((c) => c.style), p).to.deep.equal([messageEnvelope]);
    }
    for (const p of ['/api/v1/rpcproxy', '/tx/api/v1/rpcproxy', '/tx/api/v1/rpcproxy/']) expect(claims(p).map((c) => c.style), p).to.deep.equal([msgEnvelope]);
    for (const p of ['/tx/api/v1/transfers/search', '/api/v1/addressbook', '/tx/api/v1/application', '/api/v1/transfer', '/tx/api/v1/transaction/ws', '/']) expect(claims(p), p).to.deep.equal([]);
  });

  it('every declared route is claimed by its own module or by none (the default, msg)', () => {
    for (const m of modules) {
      for (const r of m.api.routes) {
        const owners = claims(r.path).map((c) => c.name);
        expect(owners.length <= 1 && owners.every((n) => n === m.name), `${r.method} ${r.path} of ${m.name}: ${owners.join(', ')}`).to.equal(true);
      }
    }
  });
});
