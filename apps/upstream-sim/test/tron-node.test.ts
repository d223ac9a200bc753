import { expect } from 'chai';
import { tronBase58ToHex } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { tronAddressFormat } from '../src/chain-nodes/tron-node';
import { WalletError } from '../src/chain-nodes/tron-node';
import { nodeOf } from './helpers';

describe('Tron node HTTP API (/wallet/*) from fixtures', () => {
  const wallet = nodeOf('tron-mainnet').wallet!;
  const call = (method: string, args: Record<string, unknown> = {}) => wallet.get(method)!(args);
  const hexBlock = readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json');
  const visibleBlock = readFixtureJson('tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json');

  it('serves getblockbynum in the address format asked for (hex without `visible`), and {} for unknown blocks', () => {
    expect(call('getblockbynum', { num: 61132092 })).to.deep.equal({ body: hexBlock, format: 'hex' });
    expect(call('getblockbynum', { num: '60836289', visible: true })).to.deep.equal({ body: visibleBlock, format: 'base58' });
    expect(call('getblockbynum', { num: 61132093 })).to.deep.equal({ body: {}, format: null });
    expect(() => call('getblockbynum', { num: 'abc' })).to.throw(WalletError, /NumberFormatException/);
    expect(() => call('getblockbynum', { num: -1 })).to.throw(WalletError);
  });

  it('answers getnowblock with the highest node block and getblockbyid by blockID', () => {
    const heights = [hexBlock, visibleBlock, readFixtureJson('tron/tron-mainnet-30864544.wallet_getblockbynum_TRUNCATED-docs-example.json')].map((b) => b.block_header.raw_data.number);
    expect(Math.max(...heights)).to.equal(hexBlock.block_header.raw_data.number);
    expect(call('getnowblock').body).to.deep.equal(hexBlock);
    expect(call('getblockbyid', { value: visibleBlock.blockID, visible: true }).body).to.deep.equal(visibleBlock);
  });

  it('finds transactions of the blocks and the standalone ones by txID', () => {
    const tx = hexBlock.transactions[5];
    expect(call('gettransactionbyid', { value: tx.txID })).to.deep.equal({ body: tx, format: 'hex' });
    expect(call('gettransactionbyid', { value: tx.txID.toUpperCase() }).body).to.deep.equal(tx);
    const standalone = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactionbyid_661f1df8_visible.json');
    expect(call('gettransactionbyid', { value: standalone.txID, visible: 'true' }).body).to.deep.equal(standalone);
    expect(call('gettransactionbyid', { value: 'f'.repeat(64) }).body).to.deep.equal({});
    expect(() => call('gettransactionbyid', { value: 'xyz' })).to.throw(WalletError);
    expect(() => call('gettransactionbyid', {})).to.throw(WalletError);
  });

  it('serves transaction infos by id and per block number, [] for a block without infos', () => {
    const info = readFixtureJson('tron/tron-mainnet-30864600.wallet_gettransactioninfobyid_0af79242.json');
    const list: any[] = readFixtureJson('tron/tron-mainnet-30864600.wallet_gettransactioninfobyblocknum_TRUNCATED-docs-example.json');
    expect(call('gettransactioninfobyid', { value: info.id }).body).to.deep.equal(info);
    const other = list.find((i) => i.id !== info.id);
    expect(call('gettransactioninfobyid', { value: other.id }).body).to.deep.equal(other);
    const visibleInfo = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json');
    expect(call('gettransactioninfobyid', { value: visibleInfo.id, visible: true })).to.deep.equal({ body: visibleInfo, format: 'base58' });
    expect(call('gettransactioninfobyblocknum', { num: list[0].blockNumber }).body).to.deep.equal(list);
    expect(call('gettransactioninfobyblocknum', { num: 61132092 }).body).to.deep.equal([]);
  });

  describe('`visible` converts the stored form, as java-tron prints either', () => {
    const ADDRESS_FIELDS = ['owner_address', 'to_address', 'contract_address', 'receiver_address', 'account_address'];
    const values = (block: any) => block.transactions.flatMap((t: any) => t.raw_data.contract.map((c: any) => ({ tx: t, value: c.parameter.value })));

    it('a visible=true block asked for in hex: the addresses and asset names are the bytes of raw_data_hex', () => {
      const { body, format } = call('getblockbynum', { num: 60836289 });
      expect(format).to.equal('hex');
      let checked = 0;
      for (const { tx, value } of values(body as any)) {
        for (const f of ADDRESS_FIELDS.filter((k) => k in value)) {
          expect(value[f]).to.match(/^41[0-9a-f]{40}$/);
          // raw_data_hex is the protobuf of raw_data: hex form = the bytes signed, whatever `visible`.
          expect(tx.raw_data_hex, `${tx.txID} ${f}`).to.include(value[f]);
          checked++;
        }
        if ('asset_name' in value) expect(tx.raw_data_hex).to.include(value.asset_name);
      }
      expect(checked).to.equal(170 + 82 + 24 + 62);
      expect((body as any).block_header.raw_data.witness_address).to.match(/^41[0-9a-f]{40}$/);
      // Back to visible: exactly the fixture.
      expect(call('getblockbynum', { num: 60836289, visible: true }).body).to.deep.equal(visibleBlock);
    });

    it('a hex block asked for with visible=true: Base58 addresses of the same bytes, asset names as text', () => {
      const { body, format } = call('getblockbynum', { num: 61132092, visible: true });
      expect(format).to.equal('base58');
      expect(tronAddressFormat(body)).to.equal('base58');
      const before = values(hexBlock);
      values(body as any).forEach(({ value }: any, i: number) => {
        for (const f of ADDRESS_FIELDS.filter((k) => k in value)) expect(tronBase58ToHex(value[f]), f).to.equal(before[i].value[f].toLowerCase());
        if ('asset_name' in value) expect(Buffer.from(value.asset_name, 'utf8').toString('hex')).to.equal(before[i].value.asset_name);
      });
    });

    it('an info: contract_address 41-hex, the log address the 20 bytes alone (as in the hex info of the same token)', () => {
      const visibleInfo = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json');
      const hexInfo = readFixtureJson('tron/tron-mainnet-30864600.wallet_gettransactioninfobyid_0af79242.json');
      // Both are USDT (TR7NHqje…) transfers: the hex fixture shows how java-tron prints it.
      const { body } = call('gettransactioninfobyid', { value: visibleInfo.id, visible: false });
      expect((body as any).contract_address).to.equal(hexInfo.contract_address);
      expect((body as any).log[0].address).to.equal(hexInfo.log[0].address);
      expect((body as any).log[0].topics).to.deep.equal(visibleInfo.log[0].topics);
      expect(call('gettransactioninfobyid', { value: hexInfo.id, visible: true }).body).to.deep.include({ contract_address: visibleInfo.contract_address });
    });
  });

  it('tells hex from base58 fixtures by their address fields', () => {
    expect(tronAddressFormat(hexBlock)).to.equal('hex');
    expect(tronAddressFormat(visibleBlock)).to.equal('base58');
    expect(tronAddressFormat({ nothing: 1 })).to.equal('hex');
  });
});
