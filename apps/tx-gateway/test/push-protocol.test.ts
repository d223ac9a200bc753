import { expect } from 'chai';
import { CHAINS } from '@chainpipe/chains';
import { parseCommand, parseResendDuration, subscriptionKey } from '../src/push/protocol';
import { Subscriptions } from '../src/push/subscriptions';

describe('WebSocket protocol (pure)', () => {
  it('X-ResendDuration: default, capped, rejects what is not whole seconds', () => {
    expect(parseResendDuration(undefined, 180, 3600)).to.deep.equal({ ok: true, seconds: 180 });
    expect(parseResendDuration('90', 180, 3600)).to.deep.equal({ ok: true, seconds: 90 });
    expect(parseResendDuration('999999', 180, 3600)).to.deep.equal({ ok: true, seconds: 3600 });
    expect(parseResendDuration('1.5', 180, 3600).ok).to.equal(false);
    expect(parseResendDuration('-1', 180, 3600).ok).to.equal(false);
  });

  it('ping → pong with the id echoed; junk → 400 replies, never a throw', () => {
    expect(parseCommand('{"id":"x","type":"ping","data":{}}')).to.deep.equal({ id: 'x', command: { kind: 'reply', reply: { type: 'pong', code: 0, data: null, msg: 'success' } } });
    for (const junk of ['nope', '[]', 'null', '{"type":7}', '{"id":"q","type":"fly"}']) {
      const { command } = parseCommand(junk);
      expect(command.kind, junk).to.equal('reply');
      if (command.kind === 'reply') expect(command.reply.code, junk).to.equal(400);
    }
  });

  it('subscribe: lowercases the chain type, stores the canonical address; missing fields are the spec 400', () => {
    // An EIP-55 checksummed address (the first example of the EIP).
    const r = parseCommand(JSON.stringify({ id: '1', type: 'subscribe', data: { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain_type: 'Ethereum' } }));
    expect(r.command).to.deep.equal({ kind: 'subscribe', chainType: 'ethereum', address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed' });
    const wrongCase = parseCommand(JSON.stringify({ id: '4', type: 'subscribe', data: { address: '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain_type: 'ethereum' } }));
    expect(wrongCase.command).to.deep.equal({ kind: 'reply', reply: { type: 'subscribe', code: 400, data: null, msg: 'address has a wrong EIP-55 checksum (mixed case)' } });
    const bad = parseCommand(JSON.stringify({ id: '2', type: 'subscribe', data: { address: '0x1' } }));
    expect(bad.command).to.deep.equal({ kind: 'reply', reply: { type: 'subscribe', code: 400, data: null, msg: 'address and chain_type required' } });
    const unknown = parseCommand(JSON.stringify({ id: '3', type: 'subscribe', data: { address: '0x1', chain_type: 'dogecoin' } }));
    expect(unknown.command.kind).to.equal('reply');
  });

  it('unsubscribe without chain_type means every chain; transactionACK and getTxHash normalize the hash', () => {
    expect(parseCommand(JSON.stringify({ type: 'unsubscribe', data: { address: 'abc' } })).command).to.deep.equal({ kind: 'unsubscribe', address: 'abc', chainType: null, keys: [] });
    const hash = 'AB'.repeat(32);
    expect(parseCommand(JSON.stringify({ type: 'transactionACK', data: { chain_type: 'ETHEREUM', chain_id: '1', txHash: hash } })).command).to.deep.equal({ kind: 'ack', txKey: `ethereum:1:0x${hash.toLowerCase()}` });
    expect(parseCommand(JSON.stringify({ type: 'transactionACK', data: {} })).command).to.deep.equal({ kind: 'ack', txKey: '' });
    expect(parseCommand(JSON.stringify({ type: 'getTxHash', data: { chain_type: 'tron', chain_id: 1, txHash: '0x' + hash } })).command).to.deep.equal({
      kind: 'getTxHash',
      messageId: null,
      chainType: 'tron',
      chainId: 1,
      hash: hash.toLowerCase(),
    });
    expect(parseCommand(JSON.stringify({ type: 'getTxHash', data: { chain_type: 'tron' } })).command.kind).to.equal('reply');
  });

  it('unsubscribe names the canonical address: on its chain, or on every chain whose family reads it', () => {
    const checksummed = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    const lower = checksummed.toLowerCase();
    const one = parseCommand(JSON.stringify({ id: '5', type: 'unsubscribe', data: { address: checksummed, chain_type: 'BSC' } }));
    expect(one.command).to.deep.equal({ kind: 'unsubscribe', address: lower, chainType: 'bsc', keys: [subscriptionKey('bsc', lower)] });
    const every = parseCommand(JSON.stringify({ id: '6', type: 'unsubscribe', data: { address: checksummed } }));
    const evmChains = Object.entries(CHAINS).filter(([, c]) => c.family === 'evm').map(([t]) => t);
    expect(evmChains).to.include.members(['ethereum', 'bsc', 'polygon']);
    if (every.command.kind !== 'unsubscribe') throw new Error('not an unsubscribe');
    expect(every.command.address).to.equal(checksummed);
    expect(every.command.chainType).to.equal(null);
    expect(every.command.keys).to.include.members(evmChains.map((t) => subscriptionKey(t, lower)));
    expect(every.command.keys.some((k) => k.startsWith('solana'))).to.equal(false);
  });
});

describe('Subscriptions of a connection (pure)', () => {
  const A = '0xaaaa000000000000000000000000000000000001';
  const B = '0xbbbb000000000000000000000000000000000002';

  it('follows every address until told otherwise; unsubscribe mutes an address on that chain only', () => {
    const s = new Subscriptions();
    expect(s.wants('ethereum', [A])).to.equal(true);
    s.unsubscribe([subscriptionKey('ethereum', A)]);
    expect(s.wants('ethereum', [A])).to.equal(false);
    expect(s.wants('bsc', [A])).to.equal(true);
    expect(s.wants('ethereum', [B])).to.equal(true);
    // A push listing a muted and a followed address is still for the followed one.
    expect(s.wants('ethereum', [A, B])).to.equal(true);
    s.subscribe(subscriptionKey('ethereum', A));
    expect(s.wants('ethereum', [A])).to.equal(true);
    expect(s.wants('ethereum', [B])).to.equal(false);
  });

  it('an explicit set shrinks; removing its last key never widens it back to every address', () => {
    const s = new Subscriptions();
    s.subscribe(subscriptionKey('ethereum', A));
    s.subscribe(subscriptionKey('ethereum', B));
    expect(s.wants('ethereum', [B])).to.equal(true);
    s.unsubscribe([subscriptionKey('ethereum', B)]);
    expect(s.wants('ethereum', [B])).to.equal(false);
    expect(s.wants('ethereum', [A])).to.equal(true);
    s.unsubscribe([subscriptionKey('ethereum', A)]);
    expect(s.wants('ethereum', [A])).to.equal(false);
    expect(s.wants('ethereum', [B])).to.equal(false);
    s.subscribe(subscriptionKey('ethereum', B));
    expect(s.wants('ethereum', [B])).to.equal(true);
  });
});
