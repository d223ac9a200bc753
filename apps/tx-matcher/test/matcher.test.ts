import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import type { ChainTxMessage } from '@chainpipe/contracts';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { FIXTURE_NETWORKS, bitcoinBlockItem, evmBlockItem, parseFixture, solanaBlockItem, tronBlockItem } from '@chainpipe/testing';
import { AddressIndex } from '../src/address-index';
import { IndexSync } from '../src/index-sync';
import { deliveryOf, matchRecords, messageId, pushMessages } from '../src/plan';

type Json = any;

const message = (tx: ChainTxMessage['tx'], extra: Partial<ChainTxMessage> = {}): ChainTxMessage => ({ id: '7', network: 'ethereum-mainnet', is_reorg_resend: false, tx, ...extra });

describe('tx-matcher: address index', () => {
  it('adds, shares an address between applications, removes idempotently', () => {
    const index = new AddressIndex();
    index.add('a', 'ethereum', '0x1');
    index.add('a', 'ethereum', '0x1');
    index.add('b', 'ethereum', '0x1');
    index.add('c', 'ethereum', '0x1');
    index.add('a', 'bsc', '0x1');
    expect(index.size).to.equal(4);
    expect(index.appsOf('ethereum', '0x1')).to.deep.equal(['a', 'b', 'c']);
    index.remove('b', 'ethereum', '0x1');
    index.remove('b', 'ethereum', '0x1');
    index.remove('zzz', 'ethereum', '0x1');
    expect(index.appsOf('ethereum', '0x1')).to.deep.equal(['a', 'c']);
    index.remove('c', 'ethereum', '0x1');
    expect(index.appsOf('ethereum', '0x1')).to.deep.equal(['a']);
    index.remove('a', 'ethereum', '0x1');
    expect(index.appsOf('ethereum', '0x1')).to.deep.equal([]);
    expect(index.appsOf('bsc', '0x1')).to.deep.equal(['a']);
    expect(index.size).to.equal(1);
  });

  it('the chain type is part of the key: the same address on another chain does not match', () => {
    const index = new AddressIndex();
    index.add('a', 'bsc', '0xabc');
    expect([...index.match('ethereum', ['0xabc'])]).to.deep.equal([]);
    expect([...index.match('bsc', ['0xabc', '0xabc'])]).to.deep.equal([['a', ['0xabc']]]);
  });
});

describe('tx-matcher: matching real blocks of every family', () => {
  // For each fixture block, pick parties straight from the raw fixture JSON (not from the parser)
  // and check the parsed record matches an application that monitors them.
  const cases: Array<{ family: 'evm' | 'svm' | 'tvm' | 'utxo'; item: Json; pick: (item: Json) => { hash: string; addresses: string[] } }> = [
    {
      family: 'evm',
      item: evmBlockItem(),
      // An ERC-20 Transfer log: topics[1] / topics[2] are the parties (lowercased, as stored).
      pick: (item) => {
        const rc = item.receipts.find((r: Json) => r.status === '0x1' && r.logs.some((l: Json) => l.topics.length === 3 && l.topics[0].startsWith('0xddf252ad')));
        const log = rc.logs.find((l: Json) => l.topics.length === 3 && l.topics[0].startsWith('0xddf252ad'));
        const tx = item.block.transactions.find((t: Json) => t.hash === rc.transactionHash);
        return { hash: rc.transactionHash, addresses: [tx.from.toLowerCase(), '0x' + log.topics[1].slice(26), '0x' + log.topics[2].slice(26)] };
      },
    },
    {
      family: 'tvm',
      item: tronBlockItem(),
      // A TRX TransferContract: owner and recipient, Base58 in this `visible=true` block.
      pick: (item) => {
        const t = item.transactions.find((x: Json) => x.raw_data.contract[0].type === 'TransferContract');
        const v = t.raw_data.contract[0].parameter.value;
        return { hash: t.txID, addresses: [v.owner_address, v.to_address] };
      },
    },
    {
      family: 'utxo',
      item: bitcoinBlockItem(),
      // The first non-coinbase transaction: its first output address.
      pick: (item) => {
        const t = item.tx.find((x: Json) => !x.vin[0].coinbase && x.vout.some((o: Json) => o.scriptPubKey.address));
        return { hash: t.txid, addresses: [t.vout.find((o: Json) => o.scriptPubKey.address).scriptPubKey.address] };
      },
    },
    {
      family: 'svm',
      item: solanaBlockItem(),
      // An SPL transfer: its destination token account (matching covers token accounts).
      pick: (item) => {
        for (const t of item.transactions) {
          if (t.meta.err !== null) continue;
          for (const inner of t.meta.innerInstructions ?? []) {
            for (const ix of inner.instructions) {
              if (ix.program === 'spl-token' && ix.parsed?.type === 'transfer') return { hash: t.transaction.signatures[0], addresses: [ix.parsed.info.destination] };
            }
          }
        }
        throw new Error('no SPL transfer in the fixture');
      },
    },
  ];

  for (const c of cases) {
    it(`${c.family}: an application monitoring parties of a transaction gets one push with all of them; another application gets none`, () => {
      const network = networkByName(FIXTURE_NETWORKS[c.family])!;
      const txs = parseFixture(c.family, c.item, network).transactions;
      const { hash, addresses } = c.pick(c.item);
      const wanted = [...new Set(addresses)].sort();
      const index = new AddressIndex();
      for (const a of wanted) index.add('app-1', network.chainType, a);
      index.add('app-2', network.chainType, 'not-a-party');
      const matches = matchRecords(index, txs.map((tx) => message(tx, { network: network.network })));
      const mine = matches.filter((m) => m.record.tx.tx_hash === hash);
      expect(mine).to.have.length(1);
      expect(mine[0].appId).to.equal('app-1');
      expect(mine[0].listenAddress).to.deep.equal(wanted);
      expect(matches.every((m) => m.appId === 'app-1')).to.equal(true);
    });
  }
});

describe('tx-matcher: a change that kept status, block and flags (earlier_parties)', () => {
  const network = networkByName('ethereum-mainnet')!;
  const item = evmBlockItem();
  // A plain ETH transfer of the fixture (value moved, no call data): sender and receiver.
  const raw = item.block.transactions.find((t: Json) => BigInt(t.value) > 0n && t.input === '0x');
  const tx = parseFixture('evm', item, network).transactions.find((t) => t.tx_hash === raw.hash)!;
  const sender = raw.from.toLowerCase();
  const receiver = raw.to.toLowerCase();
  const added = '0x00000000000000000000000000000000000000a1';

  it('is pushed only to applications that match a party the earlier record did not have', () => {
    const index = new AddressIndex();
    index.add('watches-sender', 'ethereum', sender);
    index.add('watches-added', 'ethereum', added);
    const enriched = { ...tx, internal_transactions: [...tx.internal_transactions, { from_address: receiver, to_address: added, amount: '1' } as (typeof tx.internal_transactions)[number]] };
    const matches = matchRecords(index, [message(enriched, { earlier_parties: [sender, receiver] })]);
    expect(matches.map((m) => [m.appId, m.listenAddress])).to.deep.equal([['watches-added', [added]]]);
    // Without earlier_parties (new, or status/block/flags changed) everyone matching is pushed.
    expect(matchRecords(index, [message(enriched)]).map((m) => m.appId).sort()).to.deep.equal(['watches-added', 'watches-sender']);
  });
});

describe('tx-matcher: push messages', () => {
  const contracts = loadContracts();
  const tx = parseFixture('evm', evmBlockItem(), networkByName('ethereum-mainnet')!).transactions[0];

  it('message ids are deterministic and change with block, status and flags', () => {
    const id = messageId('a', tx, false, false);
    expect(messageId('a', tx, false, false)).to.equal(id);
    expect(id).to.match(/^[0-9a-f]{32}$/);
    const others = [messageId('b', tx, false, false), messageId('a', { ...tx, block_hash: '0xother' }, false, false), messageId('a', { ...tx, tx_status: 'pending' }, false, false), messageId('a', tx, true, false), messageId('a', tx, false, true)];
    expect(new Set([id, ...others]).size).to.equal(6);
  });

  it('messages satisfy the tx.push.v1 contract, carry the flags and skip muted applications', () => {
    const index = new AddressIndex();
    index.add('on', 'ethereum', tx.sender!);
    index.add('off', 'ethereum', tx.sender!);
    const matches = matchRecords(index, [message(tx, { is_reorg_resend: true, orphaned: true })]);
    const msgs = pushMessages(matches, (app) => (app === 'on' ? { ws: true, webhook: true } : { ws: false, webhook: false }), 1234);
    expect(msgs).to.have.length(1);
    expect(TOPICS.txPush.key(msgs[0])).to.equal('on');
    expect(msgs[0].value).to.include({ app_id: 'on', is_reorg_resend: true, orphaned: true, ws: true, webhook: true, matched_at: 1234, tx_id: '7' });
    expect(contracts.validate('kafka/tx.push.v1', msgs[0].value)).to.deep.equal({ ok: true });
  });

  it('delivery switches: defaults without configuration; inactive application or config mutes; webhook needs a URL', () => {
    const base = { enable_ws: true, enable_webhook: true, webhook_url: 'https://x.example', is_active: true, app_active: true };
    expect(deliveryOf(undefined)).to.deep.equal({ ws: true, webhook: false });
    expect(deliveryOf(base)).to.deep.equal({ ws: true, webhook: true });
    expect(deliveryOf({ ...base, is_active: false })).to.deep.equal({ ws: false, webhook: false });
    expect(deliveryOf({ ...base, app_active: false })).to.deep.equal({ ws: false, webhook: false });
    expect(deliveryOf({ ...base, webhook_url: null })).to.deep.equal({ ws: true, webhook: false });
    expect(deliveryOf({ ...base, enable_ws: false })).to.deep.equal({ ws: false, webhook: true });
  });
});

describe('tx-matcher: index sync', () => {
  it('a change arriving during a reload is applied to the new index too', async () => {
    const sync = new IndexSync();
    await sync.reload(async (onPage) => {
      onPage([{ app_id: 'a', chain_type: 'ethereum', address: '0x1' }]);
      return 1;
    });
    expect(sync.index.appsOf('ethereum', '0x1')).to.deep.equal(['a']);
    await sync.reload(async (onPage) => {
      // The snapshot was read before the removal of 0x1 and the addition of 0x2 landed.
      onPage([{ app_id: 'a', chain_type: 'ethereum', address: '0x1' }]);
      sync.applyChange({ app_id: 'a', chain_type: 'ethereum', adds: ['0x2'], removes: ['0x1'], changed_at: 1 });
      expect(sync.index.appsOf('ethereum', '0x2')).to.deep.equal(['a']);
      return 1;
    });
    expect(sync.index.appsOf('ethereum', '0x1')).to.deep.equal([]);
    expect(sync.index.appsOf('ethereum', '0x2')).to.deep.equal(['a']);
  });

  it('a reload repairs a change notice that never arrived', async () => {
    const sync = new IndexSync();
    await sync.reload(async () => 0);
    expect(sync.index.appsOf('tron', 'T1')).to.deep.equal([]);
    await sync.reload(async (onPage) => {
      onPage([{ app_id: 'a', chain_type: 'tron', address: 'T1' }]);
      return 1;
    });
    expect(sync.index.appsOf('tron', 'T1')).to.deep.equal(['a']);
  });
});
