import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { sha256 } from '@noble/hashes/sha256';
import { Transaction, script } from 'bitcoinjs-lib';
import { MnemonicSigner, dustThreshold, memoScript, outputScriptOf, p2wpkhVsize, satPerVbyte, satoshis, shapeBitcoinTransfer, signBitcoinTransfer } from '../src';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** BIP84's test vector: the first receive address of that mnemonic's account m/84'/0'/0'. */
const BIP84_FIRST = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
/** BIP173's mainnet P2WPKH example, and a P2PKH address (the genesis coinbase's). */
const P2WPKH_OTHER = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const P2PKH = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
const MEMO = '=:ETH.ETH:0x2222222222222222222222222222222222222222:1234567';

const sha256d = (b: Uint8Array) => sha256(sha256(b));
const le = (n: bigint, bytes: number) => {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
};
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('Bitcoin transfers from P2WPKH deposit addresses', () => {
  describe('size and fee arithmetic (BIP141 weight)', () => {
    it('a 1-input, 2-output P2WPKH transaction is 141 vB with a 72-byte signature', () => {
      // non-witness: 4 version + 1 count + 41 input + 1 count + 2 × 31 outputs + 4 locktime = 113 bytes → 452 WU;
      // witness: 2 marker/flag + 1 items + 73 signature + 34 key = 110 WU; 562 / 4 = 140.5 → 141
      expect(p2wpkhVsize(1, [outputScriptOf(P2WPKH_OTHER), outputScriptOf(BIP84_FIRST)])).to.equal(141);
      // two inputs: 154 bytes → 616 WU + 2 + 2 × 108 = 834 WU → 208.5 → 209
      expect(p2wpkhVsize(2, [outputScriptOf(P2WPKH_OTHER), outputScriptOf(BIP84_FIRST)])).to.equal(209);
    });

    it('the memo output adds 8 value + 1 length + its script (OP_RETURN, push, 60 bytes = 62)', () => {
      expect(MEMO.length).to.equal(60);
      // 113 + 71 = 184 bytes → 736 + 110 = 846 WU → 211.5 → 212
      expect(p2wpkhVsize(1, [outputScriptOf(P2WPKH_OTHER), memoScript(MEMO), outputScriptOf(BIP84_FIRST)])).to.equal(212);
    });

    it("dust thresholds are Core's at 3 sat/vB: 294 sat for P2WPKH, 546 for P2PKH, none for OP_RETURN", () => {
      expect(dustThreshold(outputScriptOf(P2WPKH_OTHER))).to.equal(294n);
      expect(dustThreshold(outputScriptOf(P2PKH))).to.equal(546n);
      expect(dustThreshold(memoScript('x'))).to.equal(0n);
    });

    it('estimatesmartfee BTC/kvB in sat/vB (rounded up) and Core amounts in satoshis, exactly', () => {
      expect(satPerVbyte(0.00012345)).to.equal(13n); // 12 345 sat/kvB = 12.345 sat/vB
      expect(satPerVbyte(0.00001)).to.equal(1n);
      expect(satPerVbyte(0.00002001)).to.equal(3n); // 2.001 → 3
      expect(satoshis(0.1)).to.equal(10_000_000n);
      expect(satoshis(0.00000001)).to.equal(1n);
      expect(satoshis(20_999_999.9769)).to.equal(2_099_999_997_690_000n);
    });
  });

  describe('memo output', () => {
    it('is OP_RETURN with the memo as one push; over 80 bytes is refused', () => {
      expect(hex(memoScript('=:BTC.BTC:x:1'))).to.equal('6a0d' + Buffer.from('=:BTC.BTC:x:1').toString('hex'));
      // 76…80 bytes need OP_PUSHDATA1 (0x4c) and a length byte
      expect(hex(memoScript('m'.repeat(80)).subarray(0, 3))).to.equal('6a4c50');
      expect(() => memoScript('m'.repeat(81))).to.throw(/80/);
    });
  });

  describe('shape', () => {
    const utxos = [{ txid: 'aa'.repeat(32), vout: 1, value: 100_000n }];

    it('pays value, then the memo, then the rest less the fee back to the deposit address', () => {
      const shape = shapeBitcoinTransfer({ utxos, from: BIP84_FIRST, to: P2WPKH_OTHER, value: 60_000n, memo: MEMO, fee: 424n });
      expect(shape.outputs.map((o) => [hex(o.script), o.value])).to.deep.equal([
        ['0014751e76e8199196d454941c45d1b3a323f1433bd6', 60_000n],
        [hex(memoScript(MEMO)), 0n],
        ['0014c0cebcd6c3d3ca8c75dc5ec62ebe55330ef910e2', 39_576n],
      ]);
      expect(shape).to.include({ change: 39_576n, fee: 424n });
    });

    it('a rest under the dust threshold goes to the network: no change output', () => {
      const shape = shapeBitcoinTransfer({ utxos: [{ ...utxos[0], value: 60_500n }], from: BIP84_FIRST, to: P2WPKH_OTHER, value: 60_000n, fee: 282n });
      expect(shape.outputs).to.have.length(1);
      expect(shape).to.include({ change: 0n, fee: 500n });
    });

    it('spends every unspent output; refuses more than they hold, and a dust payment', () => {
      const two = [...utxos, { txid: 'bb'.repeat(32), vout: 0, value: 5_000n }];
      expect(shapeBitcoinTransfer({ utxos: two, from: BIP84_FIRST, to: P2WPKH_OTHER, value: 104_000n, fee: 418n }).inputs).to.have.length(2);
      expect(() => shapeBitcoinTransfer({ utxos, from: BIP84_FIRST, to: P2WPKH_OTHER, value: 99_800n, fee: 282n })).to.throw(/insufficient funds/);
      expect(() => shapeBitcoinTransfer({ utxos, from: BIP84_FIRST, to: P2WPKH_OTHER, value: 293n, fee: 282n })).to.throw(/dust/);
      expect(() => shapeBitcoinTransfer({ utxos: [], from: BIP84_FIRST, to: P2WPKH_OTHER, value: 1_000n, fee: 282n })).to.throw(/no unspent outputs/);
    });
  });

  describe('signing', () => {
    const signer = new MnemonicSigner(MNEMONIC);

    it('signs each input over its BIP143 digest with the key of the address; the witness is [DER‖SIGHASH_ALL, key]', async () => {
      const from = { index: 0, address: await signer.addressAt('utxo', 0) };
      expect(from.address).to.equal(BIP84_FIRST);
      const inputs = [{ txid: '11'.repeat(31) + '01', vout: 3, value: 70_000n }, { txid: '22'.repeat(32), vout: 0, value: 40_000n }];
      const shape = shapeBitcoinTransfer({ utxos: inputs, from: from.address, to: P2WPKH_OTHER, value: 80_000n, memo: MEMO, fee: 1_000n });
      const { raw, hash } = await signBitcoinTransfer(signer, from, shape);
      const tx = Transaction.fromHex(raw);
      expect(tx.getId()).to.equal(hash);
      expect(tx.ins.map((i) => [Buffer.from(i.hash).reverse().toString('hex'), i.index])).to.deep.equal(inputs.map((u) => [u.txid, u.vout]));
      expect(tx.outs.map((o) => o.value)).to.deep.equal([80_000n, 0n, 29_000n]);
      // the signed transaction is within the estimate the fee was computed on
      expect(tx.virtualSize()).to.be.at.most(p2wpkhVsize(2, shape.outputs.map((o) => o.script)));

      // BIP143's preimage, assembled here from the specification, not by the library that signed
      const keyHash = Buffer.from('c0cebcd6c3d3ca8c75dc5ec62ebe55330ef910e2', 'hex');
      const outpoint = (u: (typeof inputs)[number]) => cat(Buffer.from(u.txid, 'hex').reverse(), le(BigInt(u.vout), 4));
      const sequence = le(0xfffffffdn, 4);
      const hashPrevouts = sha256d(cat(...inputs.map(outpoint)));
      const hashSequence = sha256d(cat(sequence, sequence));
      const hashOutputs = sha256d(cat(...shape.outputs.map((o) => cat(le(o.value, 8), Uint8Array.of(o.script.length), o.script))));
      const scriptCode = cat(Uint8Array.of(0x19, 0x76, 0xa9, 0x14), keyHash, Uint8Array.of(0x88, 0xac));
      inputs.forEach((u, i) => {
        const preimage = cat(le(2n, 4), hashPrevouts, hashSequence, outpoint(u), scriptCode, le(u.value, 8), sequence, hashOutputs, le(0n, 4), le(1n, 4));
        const [der, pubkey] = tx.ins[i].witness;
        const decoded = script.signature.decode(der);
        expect(decoded.hashType, 'SIGHASH_ALL').to.equal(1);
        expect(secp256k1.verify(decoded.signature, sha256d(preimage), pubkey, { lowS: true }), `input ${i} signature`).to.equal(true);
        expect(pubkey).to.have.length(33);
      });
    });

    it('is refused when the signer key of the index does not own the address', async () => {
      const shape = shapeBitcoinTransfer({ utxos: [{ txid: 'aa'.repeat(32), vout: 0, value: 10_000n }], from: P2WPKH_OTHER, to: BIP84_FIRST, value: 5_000n, fee: 300n });
      let failure: Error | undefined;
      await signBitcoinTransfer(signer, { index: 0, address: P2WPKH_OTHER }, shape).catch((err: Error) => (failure = err));
      expect(failure?.message).to.match(/does not own/);
    });
  });
});
