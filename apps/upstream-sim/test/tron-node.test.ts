import { expect } from 'chai';
import { readFixtureJson } from '@chainpipe/testing';
import { tronAddressFormat } from '../src/chain-nodes/tron-node';
import { WalletError } from '../src/chain-nodes/tron-node';
import { nodeOf } from './helpers';

describe('Tron node HTTP API (/wallet/*) from fixtures', () => {
  const wallet = nodeOf('tron-mainnet').wallet!;
  const call = (method: string, args: Record<string, unknown> = {}) => wallet.get(method)!(args);
  const hexBlock = readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json');
  const visibleBlock = readFixtureJson('tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json');

  it('serves getblockbynum in the address format of the fixture it has, and {} for unknown blocks', () => {
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
    expect(call('getblockbyid', { value: visibleBlock.blockID }).body).to.deep.equal(visibleBlock);
  });

  it('finds transactions of the blocks and the standalone ones by txID', () => {
    const tx = hexBlock.transactions[5];
    expect(call('gettransactionbyid', { value: tx.txID })).to.deep.equal({ body: tx, format: 'hex' });
    expect(call('gettransactionbyid', { value: tx.txID.toUpperCase() }).body).to.deep.equal(tx);
    const standalone = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactionbyid_661f1df8_visible.json');
    expect(call('gettransactionbyid', { value: standalone.txID }).body).to.deep.equal(standalone);
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
    expect(call('gettransactioninfobyid', { value: visibleInfo.id })).to.deep.equal({ body: visibleInfo, format: 'base58' });
    expect(call('gettransactioninfobyblocknum', { num: list[0].blockNumber }).body).to.deep.equal(list);
    expect(call('gettransactioninfobyblocknum', { num: 61132092 }).body).to.deep.equal([]);
  });

  it('tells hex from base58 fixtures by their address fields', () => {
    expect(tronAddressFormat(hexBlock)).to.equal('hex');
    expect(tronAddressFormat(visibleBlock)).to.equal('base58');
    expect(tronAddressFormat({ nothing: 1 })).to.equal('hex');
  });
});
