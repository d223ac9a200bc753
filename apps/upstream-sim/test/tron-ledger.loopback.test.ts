import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import pino from 'pino';
import { Registry } from 'prom-client';
import { networkByName, tronBase58ToHex, tronHexToBase58 } from '@chainpipe/chains';
import { MnemonicSigner, TronNodeError, TronSender, transferCalldata } from '@chainpipe/custody';
import { TEST_KEY_MNEMONIC, parseFixture } from '@chainpipe/testing';
import { BlockProducer } from '../src/chain-nodes/block-producer';
import { buildChainNodes, type ChainNode } from '../src/chain-nodes/nodes';
import { chainNodesRouter } from '../src/chain-nodes/router';
import { FUNDED_TRC20_BALANCE, FUNDED_TRX_SUN, TRON_CHAIN_PARAMETERS } from '../src/chain-nodes/tron-ledger';
import { fixtureDocs } from './helpers';

/**
 * The simulated Tron's ledger through java-tron's HTTP API, driven by the platform's TronSender:
 * a built transfer signed by the deposit key is taken, mined into a node-form block that our
 * Tron parser reads, and answered by the read methods; java-tron's refusals (another signer,
 * an expired transaction, a duplicate); and the sender's own refusals of a node that builds
 * something else than it was asked.
 */
describe('simulated Tron ledger and the Tron sender', () => {
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  let now = Date.UTC(2026, 10, 26, 9, 0, 0);
  let node: ChainNode;
  let server: Server;
  let base = '';
  let sender: TronSender;
  /** Set by a test: the node answers createtransaction with this instead of its own build. */
  let tamper: ((built: any) => any) | undefined;
  let payer = { index: 5, address: '' };
  const fresh = () => tronHexToBase58(`41${Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString('hex')}`)!;
  const wallet = (method: string, args: Record<string, unknown>) => node.wallet!.get(method)!(args).body as any;
  const mine = () => node.tronLedger!.produceBlock(Math.floor(now / 1000));

  before(async () => {
    payer = { index: 5, address: await signer.addressAt('tvm', 5) };
    const nodes = buildChainNodes(fixtureDocs(), { clientVersion: 'test', tronLedger: { funded: new Map([[tronBase58ToHex(payer.address)!, FUNDED_TRX_SUN]]), now: () => now } });
    node = nodes.nodes.get('tron-mainnet')!;
    const app = express();
    // the body is read only when tampering: the node's router reads it as text otherwise
    app.post('/rpc/tron-mainnet/wallet/createtransaction', (req, res, next) => {
      const change = tamper;
      if (!change) return next();
      express.json()(req, res, () => res.json(change(wallet('createtransaction', req.body))));
    });
    app.use(chainNodesRouter({ chainNodes: nodes, logger: pino({ level: 'silent' }), registry: new Registry(), bodyLimitBytes: 1 << 20, maxBatch: 10 }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sender = new TronSender({ url: `${base}/rpc/tron-mainnet`, timeoutMs: 5000, now: () => now }, signer);
  });

  after(() => new Promise((r) => server.close(r)));
  afterEach(() => {
    tamper = undefined;
  });

  it('a TRX transfer: built, signed, taken, mined into a block our parser reads; receipt, balances and fee from the chain', async () => {
    const to = fresh();
    expect(await sender.balanceOf(to), 'an account nobody paid holds nothing').to.equal(0n);
    const { raw, hash } = await sender.sign(payer, { to, value: 7_000_000n });
    expect(await sender.broadcast(raw, hash)).to.equal('accepted');
    expect(await sender.broadcast(raw, hash), 'a second broadcast: the node has it').to.equal('known');
    expect(await sender.receipt(hash)).to.deep.equal({ mined: false });
    const produced = mine();
    expect(produced).to.include({ dataset: 'block' });
    expect(produced.block.transactions).to.have.length(1);

    // the stream's `block` element, through the parser chain-parser runs (it throws on any issue)
    const parsed = parseFixture('tvm', produced.item as any, networkByName('tron-mainnet')!);
    expect(parsed.block.height).to.equal(produced.number);
    const [record] = parsed.transactions;
    expect(record).to.include({ tx_hash: hash, sender: payer.address, receiver: to, amount: '7000000', transfer_type: 'native', tx_status: 'success' });

    const receipt = await sender.receipt(hash);
    expect(receipt).to.deep.equal({ mined: true, success: true, blockNumber: produced.number, confirmations: 1 });
    mine();
    expect((await sender.receipt(hash)) as { confirmations: number }).to.include({ confirmations: 2 });
    const info = wallet('gettransactioninfobyid', { value: hash });
    // a new account: its activation is burnt (mainnet's 0.1 TRX); the bandwidth came from the free 600 bytes
    expect(info.fee).to.equal(TRON_CHAIN_PARAMETERS.getCreateAccountFee);
    expect(info.receipt.net_usage).to.be.greaterThan(150);
    expect(await sender.balanceOf(to)).to.equal(7_000_000n);
    expect(await sender.balanceOf(payer.address)).to.equal(FUNDED_TRX_SUN - 7_000_000n - BigInt(info.fee));
    const plan = await sender.feePlan(payer.address, fresh());
    expect(plan.maxNetworkFee >= BigInt(info.fee) + BigInt(info.receipt.net_usage * TRON_CHAIN_PARAMETERS.getTransactionFee), 'the plan covers activation and burnt bandwidth').to.equal(true);
  });

  it("java-tron's refusals: another key's signature (SIGERROR), a changed amount after signing, an expired transaction (replaced unless the chain has it)", async () => {
    const to = fresh();
    const other = { index: 6, address: await signer.addressAt('tvm', 6) };
    const { raw } = await sender.sign(payer, { to, value: 1_000_000n });
    const tx = JSON.parse(raw);
    const byOther = await new MnemonicSigner(TEST_KEY_MNEMONIC).sign({ family: 'tvm', index: other.index, address: other.address, digests: [tx.txID] });
    const forged = JSON.stringify({ ...tx, signature: [`${byOther[0].r}${byOther[0].s}0${byOther[0].recovery}`] });
    await expectRefusal(sender.broadcast(forged, tx.txID), 'SIGERROR');
    const changed = JSON.parse(raw);
    changed.raw_data.contract[0].parameter.value.amount = 2_000_000;
    await expectRefusal(sender.broadcast(JSON.stringify(changed), tx.txID), 'SIGERROR');

    now += 61_000; // java-tron's built transactions expire a minute on
    expect(await sender.broadcast(raw, tx.txID), 'never taken, now expired: it can never be mined').to.equal('replaced');
    const mined = await sender.sign(payer, { to, value: 1_000_000n });
    expect(await sender.broadcast(mined.raw, mined.hash)).to.equal('accepted');
    mine();
    now += 61_000;
    expect(await sender.broadcast(mined.raw, mined.hash), 'expired but in a block: known').to.equal('known');
  });

  it('refuses to sign what the node built for another transfer than asked: recipient, txID, raw_data JSON beside its bytes', async () => {
    const to = fresh();
    tamper = () => wallet('createtransaction', { owner_address: payer.address, to_address: fresh(), amount: 3_000_000, visible: true });
    await expectThrow(sender.sign(payer, { to, value: 3_000_000n }), /another transfer than asked/);
    tamper = (built) => ({ ...built, txID: 'ab'.repeat(32) });
    await expectThrow(sender.sign(payer, { to, value: 3_000_000n }), /not the sha256 of its raw_data/);
    tamper = (built) => {
      const copy = structuredClone(built);
      copy.raw_data.contract[0].parameter.value.to_address = fresh();
      return copy;
    };
    await expectThrow(sender.sign(payer, { to, value: 3_000_000n }), /does not match its raw_data_hex/);
  });

  it('reorganises: the last blocks replaced by blocks of other ids at the same numbers, balances as before them, the transfer executed again first or (requeue) back in the pool', async () => {
    const to = fresh();
    const { raw, hash } = await sender.sign(payer, { to, value: 3_000_000n });
    expect(await sender.broadcast(raw, hash)).to.equal('accepted');
    const payerBefore = await sender.balanceOf(payer.address);
    const a = mine();
    now += 3000;
    const b = mine();
    now += 3000;
    const ledger = node.tronLedger!;
    const { displaced, produced } = ledger.reorg(2, Math.floor(now / 1000));
    expect(displaced.map((d) => [d.number, d.hash])).to.deep.equal([[a.number, a.block.blockID], [b.number, b.block.blockID]]);
    expect(produced.map((p) => p.number)).to.deep.equal([a.number, b.number]);
    expect(produced.map((p) => p.block.blockID)).to.not.include.members([a.block.blockID, b.block.blockID]);
    expect(wallet('getblockbyid', { value: a.block.blockID }), 'the displaced block is gone').to.deep.equal({});
    expect(wallet('gettransactioninfobyid', { value: hash })).to.include({ blockNumber: a.number });
    expect(await sender.balanceOf(to), 'paid once').to.equal(3_000_000n);

    now += 3000;
    ledger.reorg(2, Math.floor(now / 1000), { requeue: true });
    expect(wallet('gettransactioninfobyid', { value: hash }), 'not on the new branch').to.deep.equal({});
    expect(await sender.balanceOf(to)).to.equal(0n);
    expect(await sender.balanceOf(payer.address), 'the payer as before the transfer').to.equal(payerBefore);
    now += 3000;
    const next = mine();
    expect(next.number).to.equal(b.number + 1);
    expect(wallet('gettransactioninfobyid', { value: hash })).to.include({ blockNumber: next.number });
    expect(await sender.balanceOf(to)).to.equal(3_000_000n);
  });

  it('a TRC-20 transfer: fee_limit from the energy estimate, USDT moved by transfer(to, amount), its balance read by balanceOf', async () => {
    const to = fresh();
    const data = transferCalldata(to, 12_345_678n);
    const plan = await sender.feePlan(payer.address, USDT, data);
    expect(plan.feeLimit > 0n).to.equal(true);
    const { raw, hash } = await sender.sign(payer, { to: USDT, value: 0n, data });
    expect(JSON.parse(raw).raw_data.fee_limit).to.equal(Number(plan.feeLimit));
    expect(await sender.broadcast(raw, hash)).to.equal('accepted');
    const produced = mine();
    expect(await sender.receipt(hash)).to.include({ mined: true, success: true });
    expect(await sender.tokenBalanceOf(USDT, to)).to.equal(12_345_678n);
    expect(await sender.tokenBalanceOf(USDT, payer.address)).to.equal(FUNDED_TRC20_BALANCE - 12_345_678n);
    const info = wallet('gettransactioninfobyid', { value: hash });
    expect(info.receipt.result).to.equal('SUCCESS');
    expect(BigInt(info.receipt.energy_fee) <= plan.feeLimit).to.equal(true);
    const [record] = parseFixture('tvm', produced.item as any, networkByName('tron-mainnet')!).transactions;
    expect(record).to.include({ tx_hash: hash, sender: payer.address, receiver: USDT, transfer_type: 'token' });
    expect(record.token_transfers[0]).to.include({ to_address: to, amount: '12345678', token_contract_address: USDT });
  });
});

describe('block producer over the Tron ledger', () => {
  it('a Tron ledger that took a transaction is mined each tick and posted as the streamer posts Tron: the `block` dataset, the node-form block', async () => {
    const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
    const payer = { index: 7, address: await signer.addressAt('tvm', 7) };
    let now = Date.UTC(2026, 10, 26, 10, 0, 0);
    const node = buildChainNodes(fixtureDocs(), { clientVersion: 'test', tronLedger: { funded: new Map([[tronBase58ToHex(payer.address)!, FUNDED_TRX_SUN]]), now: () => now } }).nodes.get('tron-mainnet')!;
    const posted: { headers: Record<string, string>; body: any }[] = [];
    const post = (async (_url: string, init: { headers: Record<string, string>; body: Buffer }) => {
      posted.push({ headers: init.headers, body: JSON.parse(init.body.toString('utf8')) });
      return new Response('{}');
    }) as unknown as typeof fetch;
    const producer = new BlockProducer({ ledgers: [node.tronLedger!], logger: pino({ level: 'silent' }), target: { url: 'http://ingest.invalid/stream', secret: 's' }, nowSec: () => Math.floor(now / 1000), post });
    await producer.tick();
    expect(posted, 'a dormant chain stays still').to.deep.equal([]);

    const call = (method: string, args: Record<string, unknown>) => node.wallet!.get(method)!(args).body as any;
    const built = call('createtransaction', { owner_address: payer.address, to_address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', amount: 1_000, visible: true });
    const [sig] = await signer.sign({ family: 'tvm', index: payer.index, address: payer.address, digests: [built.txID] });
    expect(call('broadcasttransaction', { ...built, signature: [`${sig.r}${sig.s}0${sig.recovery}`] })).to.deep.equal({ result: true, txid: built.txID });
    now += 3000;
    await producer.tick();
    expect(posted).to.have.length(1);
    const { metadata, data } = posted[0].body;
    const head = call('getnowblock', {});
    expect(metadata).to.include({ dataset: 'block', network: 'tron-mainnet', batch_start_range: head.block_header.raw_data.number });
    expect(data).to.deep.equal([head]);
    expect(head.transactions.map((t: any) => t.txID)).to.deep.equal([built.txID]);
  });
});

async function expectRefusal(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(TronNodeError);
    expect((err as TronNodeError).code).to.equal(code);
    return;
  }
  throw new Error(`accepted, not refused with ${code}`);
}

async function expectThrow(p: Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect((err as Error).message).to.match(message);
    return;
  }
  throw new Error('signed');
}
