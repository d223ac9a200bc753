import { expect } from 'chai';
import { decodeTronRawData, encodeTronRawData, tronRawDataFromJson, tronRawDataToJson, tronSignerOf, tronTxId } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';

/**
 * Tron's raw_data codec against real mainnet transactions (test/fixtures/chain/tron): the
 * node's raw_data_hex of each must hash to its txID, decode to the fields of its own raw_data
 * JSON (hex and Base58 forms), encode back byte for byte, and its signature must recover the
 * owner address.
 */
interface FixtureTx {
  txID: string;
  raw_data: Record<string, unknown>;
  raw_data_hex: string;
  signature: string[];
}

const block = readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json');
const hexTxs: FixtureTx[] = (block.result ?? block).transactions;
const modelled = (t: FixtureTx) => {
  const c = (t.raw_data.contract as { type: string; parameter: { value: Record<string, unknown> } }[])[0];
  return c.type === 'TransferContract' || (c.type === 'TriggerSmartContract' && c.parameter.value.call_token_value === undefined);
};

describe('Tron raw_data codec (real transactions)', () => {
  const visibleTx: FixtureTx = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactionbyid_661f1df8_visible.json');
  const transfer = hexTxs.find((t) => t.txID === '21c3adae72355717ffb7b74ba5957d13edc4cc468b2f3223e96974d0d4e248e4')!;
  const usdt = hexTxs.find((t) => t.txID === '3d7209f910801cc64486775bbf250d5d5b7aa6ab1666966aafcbd7ac95d5306e')!;

  it('a TRX transfer: txID is sha256 of raw_data_hex, which decodes to its JSON fields', () => {
    expect(tronTxId(transfer.raw_data_hex)).to.equal(transfer.txID);
    const decoded = decodeTronRawData(Buffer.from(transfer.raw_data_hex, 'hex'));
    // the fixture's own JSON: 292 sun from 4192be94… to 4163c8ac…, ref block cd28 / 64bd4a37…
    expect(decoded).to.deep.equal({
      refBlockBytes: 'cd28',
      refBlockHash: '64bd4a376fabd5b7',
      expiration: 1714038912000,
      data: '',
      contract: { type: 'TransferContract', owner: '4192be94953946c44bca04344209712832d1f56a59', to: '4163c8acf2e9ced9dcf4537cec8c452e4515589311', amount: 292n },
      timestamp: 1714038854684,
      feeLimit: 0n,
    });
    expect(Buffer.from(encodeTronRawData(decoded)).toString('hex')).to.equal(transfer.raw_data_hex);
  });

  it('a USDT transfer (TriggerSmartContract with a fee_limit) decodes to its JSON fields, in both address forms', () => {
    expect(tronTxId(usdt.raw_data_hex)).to.equal(usdt.txID);
    const decoded = decodeTronRawData(Buffer.from(usdt.raw_data_hex, 'hex'));
    expect(decoded.contract).to.deep.equal({ type: 'TriggerSmartContract', owner: '41241d16900475fe7c0f54c9217514c137a0bf9be7', contract: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c', callValue: 0n, data: (usdt.raw_data.contract as any)[0].parameter.value.data });
    expect(decoded.feeLimit).to.equal(50_000_000n);

    expect(tronTxId(visibleTx.raw_data_hex)).to.equal(visibleTx.txID);
    const fromVisible = decodeTronRawData(Buffer.from(visibleTx.raw_data_hex, 'hex'));
    expect(fromVisible).to.deep.equal(tronRawDataFromJson(visibleTx.raw_data));
    expect(fromVisible.contract).to.include({ contract: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' }); // TR7NHqje…, USDT
  });

  it('every TRX transfer and contract call of a whole mainnet block: id, decoding = its JSON, encoding = its hex, JSON printed back', () => {
    const txs = hexTxs.filter(modelled);
    expect(txs.length).to.be.greaterThan(200);
    for (const t of txs) {
      expect(tronTxId(t.raw_data_hex), t.txID).to.equal(t.txID);
      const decoded = decodeTronRawData(Buffer.from(t.raw_data_hex, 'hex'));
      expect(decoded, t.txID).to.deep.equal(tronRawDataFromJson(t.raw_data));
      // a client may write a zero timestamp explicitly (proto3 writers leave it out): the same fields, other bytes
      if (decoded.timestamp !== 0) expect(Buffer.from(encodeTronRawData(decoded)).toString('hex'), t.txID).to.equal(t.raw_data_hex);
      expect(tronRawDataToJson(decoded, false), t.txID).to.deep.equal(t.raw_data);
    }
  });

  it("a transaction's signature recovers its owner address", () => {
    for (const t of [transfer, usdt]) expect(tronSignerOf(t.txID, t.signature[0])).to.equal((t.raw_data.contract as any)[0].parameter.value.owner_address);
    expect(tronSignerOf(visibleTx.txID, visibleTx.signature[0])).to.equal('418f92db973b39b3edc4897c0ca3ca25e05e8fef0e'); // TP4MZM8i…
    expect(tronSignerOf(transfer.txID, usdt.signature[0])).to.not.equal('4192be94953946c44bca04344209712832d1f56a59');
  });

  it('refuses what it does not model: other contract types, a TRC-10 call value', () => {
    const other = hexTxs.find((t) => (t.raw_data.contract as any)[0].type === 'DelegateResourceContract')!;
    expect(() => decodeTronRawData(Buffer.from(other.raw_data_hex, 'hex'))).to.throw(/neither a TRX transfer/);
    expect(() => decodeTronRawData(Buffer.from('0a02', 'hex'))).to.throw();
  });
});
