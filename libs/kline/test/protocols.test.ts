import { expect } from 'chai';
import { INTERVALS } from '../src/intervals';
import { normalizeOhlcvQuery, toUnixSeconds } from '../src/ohlcv-query';
import { normalizeChainType, poolKey } from '../src/pools';
import { planSubscriptions } from '../src/subscription-plan';
import { parseOhlcvList, parseServerMessage, poolsCommand, subscribeCommand } from '../src/upstream-protocol';
import { parseClientMessage } from '../src/ws-protocol';

describe('kline WebSocket client messages', () => {
  const sub = (data: unknown) => JSON.stringify({ id: 'r1', type: 'subscribe', data });
  const pool = { chain_type: 'ETH', chain_id: 1, pool_address: '0xAbC' };

  it('names each protocol error as the spec does', () => {
    expect(parseClientMessage('{nope')).to.deep.equal({ error: { id: '', code: 4001, msg: 'Invalid JSON' } });
    expect(parseClientMessage('[]')).to.deep.equal({ error: { id: '', code: 4001, msg: 'Missing id or type' } });
    expect(parseClientMessage('{"type":"ping"}')).to.deep.equal({ error: { id: '', code: 4001, msg: 'Missing id or type' } });
    expect(parseClientMessage('{"id":"x"}')).to.deep.equal({ error: { id: 'x', code: 4001, msg: 'Missing id or type' } });
    expect(parseClientMessage('{"id":"x","type":"hello"}')).to.deep.equal({ error: { id: 'x', code: 4002, msg: 'Unknown command: hello' } });
    expect(parseClientMessage(sub({ chain_type: 'evm', chain_id: 1 }))).to.deep.equal({ error: { id: 'r1', code: 4001, msg: 'subscribe: missing required fields' } });
    expect(parseClientMessage(sub({ ...pool, chain_id: 0 }))).to.have.nested.property('error.msg', 'subscribe: missing required fields');
    expect(parseClientMessage(sub({ ...pool, intervals: '1m,1h' }))).to.have.nested.property('error.msg', 'subscribe: missing required fields');
    expect(parseClientMessage('{"id":"u","type":"unsubscribe","data":{}}')).to.deep.equal({ error: { id: 'u', code: 4001, msg: 'unsubscribe: missing required fields' } });
  });

  it('normalizes the pool and filters intervals', () => {
    expect(parseClientMessage(sub({ ...pool, intervals: ['1h', 'bogus', '1m', '1m'] }))).to.deep.equal({
      type: 'subscribe',
      id: 'r1',
      pool: { chain_type: 'evm', chain_id: 1, pool_address: '0xAbC' },
      token: undefined,
      intervals: ['1m', '1h'],
    });
    expect(parseClientMessage(sub(pool))).to.have.property('intervals').that.deep.equals([...INTERVALS]);
    expect(parseClientMessage(sub({ ...pool, intervals: [] }))).to.have.property('intervals').that.deep.equals([...INTERVALS]);
    expect(parseClientMessage(sub({ ...pool, intervals: ['5m'] }))).to.have.property('intervals').that.deep.equals([...INTERVALS]);
  });

  it('keys pools by normalized chain type and lowercase address', () => {
    expect(poolKey({ chain_type: normalizeChainType(' Solana ')!, chain_id: 1, pool_address: 'AbC', token: 'quote' })).to.equal('svm:1:abc:quote');
    expect(normalizeChainType('TRX')).to.equal('tvm');
    expect(normalizeChainType('Bitcoin Cash')).to.equal('utxo');
    expect(normalizeChainType('apt')).to.equal('move');
    expect(normalizeChainType('Atom')).to.equal('cosmos');
    expect(normalizeChainType('Base')).to.equal('evm');
    expect(normalizeChainType(' Near ')).to.equal('near');
    expect(normalizeChainType('  ')).to.equal(undefined);
  });
});

describe('ohlcv query normalization', () => {
  it('reads values above 10000000000 as milliseconds', () => {
    expect(toUnixSeconds(10_000_000_000)).to.equal(10_000_000_000);
    expect(toUnixSeconds(10_000_000_001)).to.equal(10_000_000);
    expect(toUnixSeconds(1_764_000_000_123)).to.equal(1_764_000_000);
    const q = normalizeOhlcvQuery({ interval: '1m', from: '1764000000000', to: '1764003600', chain_type: 'ethereum', chain_id: '1', pool_address: ' 0xA ' });
    expect(q).to.deep.equal({ interval: '1m', from: 1764000000, to: 1764003600, limit: 1000, chain_type: 'evm', chain_id: 1, pool_address: '0xA' });
  });
});

describe('upstream OnchainOHLCV protocol', () => {
  it('builds the documented commands', () => {
    expect(subscribeCommand()).to.deep.equal({ command: 'subscribe', identifier: '{"channel":"OnchainOHLCV"}' });
    const cmd = poolsCommand('set_pools', ['bsc:0x172fcd41e0913e95784454622d1c3724f546f849'], '1s', 'base');
    expect(JSON.parse(cmd.data)).to.deep.equal({ 'network_id:pool_addresses': ['bsc:0x172fcd41e0913e95784454622d1c3724f546f849'], interval: '1s', token: 'base', action: 'set_pools' });
  });

  it('reads the documented server messages', () => {
    expect(parseServerMessage('{"code":3000,"message":"Connection established","uuid":"s1"}')).to.deep.equal({ kind: 'connected', sid: 's1' });
    expect(parseServerMessage('{"type":"welcome","sid":"s1"}')).to.deep.equal({ kind: 'welcome', sid: 's1' });
    expect(parseServerMessage('{"type":"confirm_subscription","identifier":"{\\"channel\\":\\"OnchainOHLCV\\"}"}')).to.deep.equal({ kind: 'confirm' });
    // The documentation's example payload.
    const example = '{"ch":"G3","n":"bsc","pa":"0x172fcd41e0913e95784454622d1c3724f546f849","to":"base","i":"1m","o":1.00052534269941,"h":1.00063525778742,"l":0.999952061655863,"c":0.999952061655863,"v":59672.13452671968,"t":1780841100}';
    const m = parseServerMessage(example);
    expect(m).to.have.property('kind', 'ohlcv');
    expect(m).to.have.nested.property('update.t', 1780841100);
    expect(parseServerMessage('{"ch":"G3","n":"bsc","pa":"0x1","to":"base","i":"1m","o":null,"h":null,"l":null,"c":null,"v":null,"t":1}')).to.have.property('kind', 'ohlcv');
    expect(parseServerMessage('{"ch":"G3","n":"bsc","pa":"0x1","to":"side","i":"1m","o":1,"h":1,"l":1,"c":1,"v":1,"t":1}')).to.deep.equal({ kind: 'unknown' });
    expect(parseServerMessage('{"code":4005,"message":"limit"}')).to.deep.equal({ kind: 'error', code: 4005, message: 'limit' });
  });
});

describe('subscription plan across sockets', () => {
  it('fills sockets up to the limit and keeps subscriptions where they are', () => {
    const a = planSubscriptions([], ['a', 'b', 'c', 'd', 'e'], 2);
    expect(a.next).to.deep.equal([['a', 'b'], ['c', 'd'], ['e']]);
    const b = planSubscriptions(a.next, ['a', 'c', 'd', 'e', 'f', 'g'], 2);
    expect(b.next).to.deep.equal([['a', 'f'], ['c', 'd'], ['e', 'g']]);
    expect([...b.removes]).to.deep.equal([[0, ['b']]]);
    expect([...b.adds]).to.deep.equal([[0, ['f']], [2, ['g']]]);
    const c = planSubscriptions(b.next, ['a'], 2);
    expect(c.next).to.deep.equal([['a']]);
    expect(planSubscriptions([], [], 5).next).to.deep.equal([]);
  });
});

describe('upstream REST OHLCV answer', () => {
  it('reads ohlcv_list oldest first, nulls kept, malformed rows skipped', () => {
    const body = { data: { id: 'x', type: 'ohlcv_request_response', attributes: { ohlcv_list: [[1_800_000_060, 2, 3, 1, 2.5, 40], [1_800_000_000, 1, 2, 0.5, 2, null], ['x', 1, 1, 1, 1, 1], [1_800_000_120, 1, 1]] } } };
    expect(parseOhlcvList(body)).to.deep.equal([
      { t: 1_800_000_000, o: 1, h: 2, l: 0.5, c: 2, v: null },
      { t: 1_800_000_060, o: 2, h: 3, l: 1, c: 2.5, v: 40 },
    ]);
    expect(parseOhlcvList({ errors: [] })).to.deep.equal([]);
  });
});
