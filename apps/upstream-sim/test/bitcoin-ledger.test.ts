import { expect } from 'chai';
import { Transaction } from 'bitcoinjs-lib';
import { shapeBitcoinTransfer, signBitcoinTransfer } from '@chainpipe/custody';
import { TEST_KEY_MNEMONIC, bitcoinWallet } from '@chainpipe/testing';
import { RpcError } from '../src/json-rpc';
import { BitcoinLedger, FUNDED_SATS, fundedBitcoinAddresses } from '../src/chain-nodes/bitcoin-ledger';
import { bitcoinNode, emptyBitcoinChain } from '../src/chain-nodes/bitcoin-node';
import { QuotesSource } from '../src/market/quotes-source';
import { ThorchainSim } from '../src/swaps/thorchain-sim';

const payer = bitcoinWallet(TEST_KEY_MNEMONIC, 1);
const other = bitcoinWallet(TEST_KEY_MNEMONIC, 2);
/** BIP173's mainnet P2WPKH example. */
const SHOP = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

describe('simulated Bitcoin mainnet: UTXO set, mempool and blocks', () => {
  let now = 1_800_000_000;
  const setup = () => {
    const chain = emptyBitcoinChain();
    const ledger = new BitcoinLedger(chain, { network: 'bitcoin-mainnet', funded: fundedBitcoinAddresses(payer.address), feeRateSatVb: 7n });
    const node = bitcoinNode(chain, ledger);
    const call = (method: string, ...params: unknown[]) => node.methods.get(method)!(params);
    const utxos = () => (call('scantxoutset', 'start', [`addr(${payer.address})`]) as { unspents: { txid: string; vout: number; amount: number }[] }).unspents;
    /** A payment from the payer's outputs (as listed now), signed as a wallet does; the raw hex and txid. */
    const payment = async (to: string, value: bigint, fee: bigint, opts: { memo?: string; from?: { txid: string; vout: number; value: bigint }[] } = {}) => {
      const from = opts.from ?? utxos().map((u) => ({ txid: u.txid, vout: u.vout, value: BigInt(Math.round(u.amount * 1e8)) }));
      return signBitcoinTransfer(payer.signer, { index: 0, address: payer.address }, shapeBitcoinTransfer({ utxos: from, from: payer.address, to, value, memo: opts.memo, fee }));
    };
    const refusal = (fn: () => unknown): { code: number; message: string } => {
      try {
        fn();
      } catch (err) {
        expect(err).to.be.instanceOf(RpcError);
        return { code: (err as RpcError).code, message: (err as RpcError).message };
      }
      throw new Error('accepted');
    };
    return { chain, ledger, call, utxos, payment, refusal, mine: () => ledger.produceBlock(now++) };
  };

  it('funds the development address with one 10 BTC output; estimatesmartfee answers the configured rate in BTC/kvB', () => {
    const { call, utxos } = setup();
    expect(utxos().map((u) => u.amount)).to.deep.equal([10]);
    expect(Number(FUNDED_SATS)).to.equal(1e9);
    // an address nobody funded holds nothing, as on the real chain
    expect((call('scantxoutset', 'start', [`addr(${other.address})`]) as { unspents: unknown[]; total_amount: number })).to.deep.include({ unspents: [], total_amount: 0 });
    // 7 sat/vB = 7000 sat/kvB = 0.00007 BTC/kvB
    expect(call('estimatesmartfee', 6)).to.deep.equal({ feerate: 0.00007, blocks: 6 });
    expect(() => fundedBitcoinAddresses('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')).to.throw(/not a mainnet P2WPKH address/);
  });

  it('pools a valid payment, shows it unmined, mines it into the next block with a coinbase; its outputs become spendable, the spent one is gone', async () => {
    const { call, ledger, utxos, payment, mine } = setup();
    const { raw, hash } = await payment(SHOP, 250_000n, 1_000n);
    expect(call('sendrawtransaction', raw)).to.equal(hash);
    // sent again while pooled: Core answers the txid again
    expect(call('sendrawtransaction', raw)).to.equal(hash);
    expect(ledger.active).to.equal(true);
    const pooled = call('getrawtransaction', hash, true) as Record<string, unknown>;
    expect(pooled).to.not.have.property('blockhash');
    expect(pooled).to.not.have.property('confirmations');

    const produced = mine();
    expect(produced.dataset).to.equal('block');
    const mined = call('getrawtransaction', hash, true) as { blockhash: string; confirmations: number; vout: { value: number; scriptPubKey: { address: string } }[] };
    expect(mined.blockhash).to.equal(produced.block.hash);
    expect(mined.confirmations).to.equal(1);
    expect(mined.vout.map((o) => [o.scriptPubKey.address, o.value])).to.deep.equal([[SHOP, 0.0025], [payer.address, 9.99749]]);
    expect(utxos().map((u) => [u.txid, u.vout, u.amount])).to.deep.equal([[hash, 1, 9.99749]]);
    const block = call('getblock', produced.block.hash, 2) as { tx: { vin: Record<string, unknown>[]; fee?: number }[]; height: number; confirmations: number };
    expect(block.tx[0].vin[0]).to.have.property('coinbase');
    expect(block.tx[1].fee).to.equal(0.00001);
    expect((call('getblockheader', produced.block.hash) as { height: number }).height).to.equal(produced.number);

    mine();
    expect((call('getrawtransaction', hash, true) as { confirmations: number }).confirmations, 'counted from the tip').to.equal(2);

    // the stream's element: Blockbook's form, inputs resolved to what they spent
    const item = produced.item as { height: number; txs: { txid: string; vin: { addresses?: string[]; value?: string }[]; vout: { value: string; addresses: string[] }[]; fees: string }[] };
    expect(item.height).to.equal(produced.number);
    const tx = item.txs.find((t) => t.txid === hash)!;
    expect(tx.vin).to.have.length(1);
    expect(tx.vin[0]).to.include({ value: '1000000000' });
    expect(tx.vin[0].addresses).to.deep.equal([payer.address]);
    expect(tx.vout.map((o) => [o.addresses[0], o.value])).to.deep.equal([[SHOP, '250000'], [payer.address, '999749000']]);
    expect(tx.fees).to.equal('1000');
  });

  it('reorganises: the last blocks replaced by others at the same heights, the UTXO set as before them, the payment mined again first or (requeue) back in the mempool', async () => {
    const { call, ledger, utxos, payment, mine } = setup();
    const shop = () => (call('scantxoutset', 'start', [`addr(${SHOP})`]) as { unspents: { txid: string; amount: number }[] }).unspents;
    const { raw, hash } = await payment(SHOP, 250_000n, 1_000n);
    call('sendrawtransaction', raw);
    const a = mine();
    const b = mine();
    const { displaced, produced } = ledger.reorg(2, now++);
    expect(displaced.map((d) => [d.number, d.hash])).to.deep.equal([[a.number, a.block.hash], [b.number, b.block.hash]]);
    expect(produced.map((p) => p.number)).to.deep.equal([a.number, b.number]);
    expect(produced.map((p) => p.block.hash)).to.not.include.members([a.block.hash, b.block.hash]);
    expect(produced[0].block.previousblockhash).to.equal(a.block.previousblockhash);
    expect((call('getrawtransaction', hash, true) as { blockhash: string }).blockhash).to.equal(produced[0].block.hash);
    expect(shop().map((u) => [u.txid, u.amount]), 'paid once').to.deep.equal([[hash, 0.0025]]);

    ledger.reorg(2, now++, { requeue: true });
    expect(shop(), 'not mined on the new branch').to.deep.equal([]);
    expect(utxos().map((u) => u.amount), "the payer's funding output unspent again").to.deep.equal([10]);
    expect(call('getrawtransaction', hash, true)).to.not.have.property('blockhash');
    expect(call('sendrawtransaction', raw), 'pooled again: Core answers its txid').to.equal(hash);
    const next = mine();
    expect(next.number).to.equal(b.number + 1);
    expect((call('getrawtransaction', hash, true) as { blockhash: string }).blockhash).to.equal(next.block.hash);
    expect(shop().map((u) => u.txid)).to.deep.equal([hash]);
    expect(() => ledger.reorg(5, now++)).to.throw(/needs as many produced blocks/);
  });

  it("refuses with Core's codes: a double spend in the pool (-26 txn-mempool-conflict), a spent input (-25), a mined transaction (-27), a bad signature, too low a fee, dust, bad hex", async () => {
    const { call, payment, refusal, mine } = setup();
    const funding = setupFunding(call, payer.address);
    const first = await payment(SHOP, 100_000n, 1_000n, { from: funding });
    const rival = await payment(SHOP, 200_000n, 1_000n, { from: funding });
    call('sendrawtransaction', first.raw);
    expect(refusal(() => call('sendrawtransaction', rival.raw))).to.deep.equal({ code: -26, message: 'txn-mempool-conflict' });
    mine();
    expect(refusal(() => call('sendrawtransaction', rival.raw))).to.deep.equal({ code: -25, message: 'Inputs missing or spent' });
    expect(refusal(() => call('sendrawtransaction', first.raw))).to.deep.equal({ code: -27, message: 'Transaction outputs already in utxo set' });

    // a signature by another key over the same digests: the witness program does not match
    const change = setupFunding(call, payer.address);
    const forged = await signBitcoinTransfer(other.signer, { index: 0, address: other.address }, shapeBitcoinTransfer({ utxos: change, from: other.address, to: SHOP, value: 5_000n, fee: 1_000n }));
    expect(refusal(() => call('sendrawtransaction', forged.raw)).message).to.match(/^mandatory-script-verify-flag-failed/);
    // the right key, a signature altered after signing
    const good = await payment(SHOP, 5_000n, 1_000n, { from: change });
    const tampered = Transaction.fromHex(good.raw);
    const sig = Buffer.from(tampered.ins[0].witness[0]);
    sig[10] ^= 1;
    tampered.ins[0].witness = [sig, tampered.ins[0].witness[1]];
    expect(refusal(() => call('sendrawtransaction', tampered.toHex())).message).to.match(/^mandatory-script-verify-flag-failed/);
    // 1-in, 2-out P2WPKH is 141 vB at most: 100 sat is under 1 sat/vB
    const cheap = await payment(SHOP, 5_000n, 100n, { from: change });
    expect(refusal(() => call('sendrawtransaction', cheap.raw))).to.deep.include({ code: -26 }).and.satisfy((e: { message: string }) => /^min relay fee not met, 100 < 1(39|40|41)$/.test(e.message));
    expect(() => shapeBitcoinTransfer({ utxos: change, from: payer.address, to: SHOP, value: 293n, fee: 1_000n })).to.throw(/dust/);
    expect(refusal(() => call('sendrawtransaction', 'zz'))).to.deep.equal({ code: -22, message: 'TX decode failed. Make sure the tx has at least one input.' });
    expect(call('sendrawtransaction', good.raw)).to.equal(good.hash);
  });

  it('THORChain watches its BTC vault: the OP_RETURN memo of a swap whose output reaches the limit is swapped, one without a memo or below the limit refunded', async () => {
    const { ledger, payment, mine, call } = setup();
    const clock = { now: 1_800_000_000_000 };
    const thor = new ThorchainSim({ quotes: new QuotesSource({ clock: { now: () => clock.now }, random: () => 0.5 }), now: () => clock.now, swapMs: 1000 });
    const vault = thor.vaultOf('BTC');
    expect(vault).to.match(/^bc1q[02-9ac-hj-np-z]{38}$/);
    const dest = '0x2222222222222222222222222222222222222222';
    const out = thor.swapOut('BTC.BTC', 'ETH.ETH', 1_000_000n)!.out;
    const swap = await payment(vault, 1_000_000n, 1_000n, { memo: `=:ETH.ETH:${dest}:${out - 10n}` });
    call('sendrawtransaction', swap.raw);
    thor.observeBlock('bitcoin-mainnet', mine().block, []);
    const plain = await payment(vault, 1_000_000n, 1_000n);
    call('sendrawtransaction', plain.raw);
    thor.observeBlock('bitcoin-mainnet', mine().block, []);
    const greedy = await payment(vault, 1_000_000n, 1_000n, { memo: `=:ETH.ETH:${dest}:${out * 2n}` });
    call('sendrawtransaction', greedy.raw);
    thor.observeBlock('bitcoin-mainnet', mine().block, []);
    expect(ledger.active).to.equal(true);

    expect(thor.statusOf(swap.hash)).to.deep.equal({ observed: true });
    clock.now += 1000;
    const outcomes = thor.observedSwaps().map((s) => [s.hash, s.outcome, s.asset, s.amount]);
    expect(outcomes).to.deep.equal([
      [swap.hash.toUpperCase(), 'done', 'BTC.BTC', '1000000'],
      [plain.hash.toUpperCase(), 'refunded', 'BTC.BTC', '1000000'],
      [greedy.hash.toUpperCase(), 'refunded', 'BTC.BTC', '1000000'],
    ]);
    expect(thor.statusOf(swap.hash).done?.outcome).to.equal('done');
  });
});

/** The payer's outputs as the node lists them now, in the shape the transfer builder takes. */
function setupFunding(call: (method: string, ...params: unknown[]) => unknown, address: string) {
  const { unspents } = call('scantxoutset', 'start', [`addr(${address})`]) as { unspents: { txid: string; vout: number; amount: number }[] };
  return unspents.map((u) => ({ txid: u.txid, vout: u.vout, value: BigInt(Math.round(u.amount * 1e8)) }));
}
