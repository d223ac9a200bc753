import { expect } from 'chai';
import { isPlausibleTxHash, normalizeTxHash } from '@chainpipe/chains';
import { loadContracts } from '@chainpipe/contracts';
import { readFixtureJson } from '@chainpipe/testing';
import { parseCursor } from '../src/queries/cursor';
import {
  addressForms,
  normalizeBatchGet,
  normalizeMultiChain,
  normalizeSearch,
  normalizeTransactionQuery,
  type Normalized,
} from '../src/queries/request';

type Json = any;

const contracts = loadContracts();

function value<T>(n: Normalized<T>): T {
  if (!n.ok) throw new Error(`expected ok, got error: ${n.error}`);
  return n.value;
}
function error<T>(n: Normalized<T>): string {
  if (n.ok) throw new Error(`expected an error, got ${JSON.stringify(n.value)}`);
  return n.error;
}

// Real addresses: the Tron USDT contract as the eth-view fixture shows it (0x + 20 bytes) and as
// Tronscan publishes it (Base58).
const TRON_EVM_VIEW = readFixtureJson<Json>('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionByHash_usdt_0x9ff75c01-docs-example.json');
const USDT_TRON_HEX = TRON_EVM_VIEW.result.to as string;
const USDT_TRON_BASE58 = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const EVM_BLOCK = readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getBlockByNumber_full.json').result;
const EVM_TX = EVM_BLOCK.transactions[1];
const SOL_SIG = readFixtureJson<Json>('solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json').result.transaction.signatures[0] as string;

describe('queries request: JSON Schemas of the bodies', () => {
  const check = (id: string, body: unknown) => contracts.validate(id, body);

  it('search: address is required, limit 1..100, numeric strings accepted, unknown fields ignored', () => {
    expect(check('http/tx/search', { address: '0xabc' }).ok).to.equal(true);
    expect(check('http/tx/search', { address: '0xabc', limit: '50', chain_id: '1', id: '123', extra: true }).ok).to.equal(true);
    expect(check('http/tx/search', { address: '0xabc', chain_type: null, id: null, token: '' }).ok).to.equal(true);
    const missing = check('http/tx/search', { chain_type: 'ethereum' });
    expect(missing).to.deep.equal({ ok: false, errors: 'address is required' });
    expect(check('http/tx/search', { address: '0xabc', limit: 0 }).ok).to.equal(false);
    expect(check('http/tx/search', { address: '0xabc', limit: 101 }).ok).to.equal(false);
    expect(check('http/tx/search', { address: '0xabc', limit: 2.5 }).ok).to.equal(false);
    expect(check('http/tx/search', { address: '0xabc', limit: 'ten' }).ok).to.equal(false);
    expect(check('http/tx/search', { address: '0xabc', id: -1 }).ok).to.equal(false);
    expect(check('http/tx/search', { address: 42 }).ok).to.equal(false);
    expect(check('http/tx/search', { address: "0xabc' or 1=1 --" }).ok).to.equal(false);
    expect(check('http/tx/search', { address: 'a'.repeat(131) }).ok).to.equal(false);
    expect(check('http/tx/search', ['0xabc']).ok).to.equal(false);
    expect(check('http/tx/search', null).ok).to.equal(false);
  });

  it('multi-chain: 1..10 groups of 1..20 addresses, chain_type and chain_id required per group', () => {
    const group = (n: number) => ({ chain_type: 'ethereum', chain_id: 1, address: Array.from({ length: n }, (_, i) => `0x${i}`) });
    expect(check('http/tx/multi-chain', { addresses: [group(20)] }).ok).to.equal(true);
    expect(check('http/tx/multi-chain', { addresses: Array.from({ length: 10 }, () => group(1)) }).ok).to.equal(true);
    expect(check('http/tx/multi-chain', { addresses: Array.from({ length: 11 }, () => group(1)) }).ok).to.equal(false);
    expect(check('http/tx/multi-chain', { addresses: [] }).ok).to.equal(false);
    const tooMany = check('http/tx/multi-chain', { addresses: [group(21)] });
    expect(tooMany.ok).to.equal(false);
    expect(!tooMany.ok && tooMany.errors).to.match(/addresses\.0\.address must NOT have more than 20 items/);
    expect(check('http/tx/multi-chain', { addresses: [{ chain_type: 'ethereum', address: ['0x1'] }] }).ok).to.equal(false);
    expect(check('http/tx/multi-chain', { addresses: [{ ...group(1), address: [] }] }).ok).to.equal(false);
  });

  it('batch-get: tx_hash is a string or 1..100 strings', () => {
    const base = { chain_type: 'ethereum', chain_id: 1 };
    expect(check('http/tx/batch-get', { ...base, tx_hash: EVM_TX.hash }).ok).to.equal(true);
    expect(check('http/tx/batch-get', { ...base, tx_hash: Array(100).fill(EVM_TX.hash) }).ok).to.equal(true);
    expect(check('http/tx/batch-get', { ...base, tx_hash: Array(101).fill(EVM_TX.hash) }).ok).to.equal(false);
    expect(check('http/tx/batch-get', { ...base, tx_hash: [] }).ok).to.equal(false);
    expect(check('http/tx/batch-get', { ...base, tx_hash: 7 }).ok).to.equal(false);
    expect(check('http/tx/batch-get', { chain_type: 'ethereum', tx_hash: EVM_TX.hash }).ok).to.equal(false);
  });

  it('single transaction parameters: strings as they arrive in path and query; repeated parameters refused', () => {
    expect(check('http/tx/queries-transaction', { tx_hash: EVM_TX.hash, chain_type: 'ethereum', chain_id: '1' }).ok).to.equal(true);
    expect(check('http/tx/queries-transaction', { tx_hash: EVM_TX.hash, chain_type: 'ethereum' }).ok).to.equal(false);
    expect(check('http/tx/queries-transaction', { tx_hash: EVM_TX.hash, chain_type: 'ethereum', chain_id: ['1', '56'] }).ok).to.equal(false);
    expect(check('http/tx/queries-transaction', { tx_hash: '../etc', chain_type: 'ethereum', chain_id: '1' }).ok).to.equal(false);
  });
});

describe('queries request: normalisation', () => {
  it('search: defaults, EVM address lowercased, chain_type case-insensitive, numeric strings parsed', () => {
    const q = value(normalizeSearch({ address: EVM_TX.from.toUpperCase().replace('0X', '0x'), chain_type: 'ETHEREUM', chain_id: '1', limit: '7', id: '99' }));
    expect(q.keys).to.deep.equal([{ address: EVM_TX.from, chainType: 'ethereum', chainId: 1 }]);
    expect(q.limit).to.equal(7);
    expect(q.beforeId).to.equal('99');
    expect(q.transferType).to.equal(null);
    expect(q.tokens).to.equal(null);
    const d = value(normalizeSearch({ address: EVM_TX.from }));
    expect(d.limit).to.equal(20);
    expect(d.beforeId).to.equal(null);
  });

  it('search: limit outside 1..100 (also as a string), unknown chains and unknown networks are 400 messages', () => {
    expect(error(normalizeSearch({ address: 'x', limit: '0' }))).to.match(/limit must be an integer from 1 to 100/);
    expect(error(normalizeSearch({ address: 'x', limit: '101' }))).to.match(/limit/);
    expect(error(normalizeSearch({ address: 'x', chain_type: 'dogecoin' }))).to.match(/chain_type "dogecoin" is not supported/);
    expect(error(normalizeSearch({ address: 'x', chain_type: 'ethereum', chain_id: 56 }))).to.match(/chain_id 56 is not a supported ethereum network/);
    expect(error(normalizeSearch({ address: '   ' }))).to.match(/address is required/);
  });

  it('search over all chains queries every stored form of the address: EVM lowercase, Tron Base58, as given', () => {
    const q = value(normalizeSearch({ address: USDT_TRON_HEX.toUpperCase().replace('0X', '0x') }));
    const forms = q.keys.map((k) => k.address);
    expect(forms).to.include(USDT_TRON_HEX); // EVM chains
    expect(forms).to.include(USDT_TRON_BASE58); // Tron
    expect(new Set(forms).size).to.equal(forms.length);
    expect(q.keys.every((k) => k.chainType === null && k.chainId === null)).to.equal(true);
  });

  it('across chains a Base58 address is searched as given only (never lowercased)', () => {
    expect(addressForms(USDT_TRON_BASE58, null)).to.deep.equal([USDT_TRON_BASE58]);
    expect(addressForms(SOL_SIG.slice(0, 44), null)).to.deep.equal([SOL_SIG.slice(0, 44)]);
  });

  it('Tron accepts Base58, 0x and 41-prefixed hex forms of one address', () => {
    expect(addressForms(USDT_TRON_BASE58, 'tron')).to.deep.equal([USDT_TRON_BASE58]);
    expect(addressForms(USDT_TRON_HEX, 'tron')).to.deep.equal([USDT_TRON_BASE58]);
    expect(addressForms('41' + USDT_TRON_HEX.slice(2), 'tron')).to.deep.equal([USDT_TRON_BASE58]);
  });

  it('search filters: tx_type (empty = none, aliases, case-insensitive, unknown refused), token normalized like addresses', () => {
    expect(value(normalizeSearch({ address: 'x', tx_type: '' })).transferType).to.equal(null);
    expect(value(normalizeSearch({ address: 'x', tx_type: 'Token' })).transferType).to.equal('token');
    expect(value(normalizeSearch({ address: 'x', tx_type: 'NativeCoin' })).transferType).to.equal('native');
    expect(error(normalizeSearch({ address: 'x', tx_type: 'swap' }))).to.match(/tx_type must be empty or one of/);
    expect(value(normalizeSearch({ address: 'x', chain_type: 'tron', token: USDT_TRON_HEX })).tokens).to.deep.equal([USDT_TRON_BASE58]);
    expect(value(normalizeSearch({ address: 'x', chain_type: 'ethereum', token: USDT_TRON_HEX.toUpperCase().replace('0X', '0x') })).tokens).to.deep.equal([USDT_TRON_HEX]);
    expect(value(normalizeSearch({ address: 'x', token: '' })).tokens).to.equal(null);
  });

  it('cursor: absent, null, "" and 0 mean the first page; negative, fractional and too large ids are refused', () => {
    expect(parseCursor(undefined)).to.deep.equal({ ok: true, value: null });
    expect(parseCursor(null)).to.deep.equal({ ok: true, value: null });
    expect(parseCursor('')).to.deep.equal({ ok: true, value: null });
    expect(parseCursor(0)).to.deep.equal({ ok: true, value: null });
    expect(parseCursor(' 123 ')).to.deep.equal({ ok: true, value: '123' });
    expect(parseCursor(9007199254740991)).to.deep.equal({ ok: true, value: '9007199254740991' });
    expect(parseCursor('9223372036854775807')).to.deep.equal({ ok: true, value: '9223372036854775807' });
    expect(parseCursor('9223372036854775808').ok).to.equal(false);
    expect(parseCursor(-1).ok).to.equal(false);
    expect(parseCursor(1.5).ok).to.equal(false);
    expect(parseCursor('1e3').ok).to.equal(false);
    expect(parseCursor({}).ok).to.equal(false);
  });

  it('multi-chain: keys per group in the group chain form, duplicates merged, group errors name the group', () => {
    const q = value(
      normalizeMultiChain({
        addresses: [
          { chain_type: 'Ethereum', chain_id: 1, address: [EVM_TX.from, EVM_TX.from.toUpperCase().replace('0X', '0x')] },
          { chain_type: 'bsc', chain_id: '56', address: EVM_TX.to },
          { chain_type: 'tron', chain_id: 1, address: [USDT_TRON_HEX] },
        ],
        limit: 5,
      }),
    );
    expect(q.keys).to.deep.equal([
      { address: EVM_TX.from, chainType: 'ethereum', chainId: 1 },
      { address: EVM_TX.to, chainType: 'bsc', chainId: 56 },
      { address: USDT_TRON_BASE58, chainType: 'tron', chainId: 1 },
    ]);
    expect(q.limit).to.equal(5);
    expect(error(normalizeMultiChain({ addresses: [{ chain_type: 'ethereum', chain_id: 1, address: ['a'] }, { chain_type: 'ethereum', chain_id: 2, address: ['a'] }] }))).to.match(/^addresses\.1: chain_id 2 is not a supported ethereum network/);
    expect(error(normalizeMultiChain({ addresses: Array(11).fill({ chain_type: 'ethereum', chain_id: 1, address: ['a'] }) }))).to.match(/1 to 10 groups/);
  });

  it('transaction hashes: EVM with or without 0x and in any case; Tron and Bitcoin bare lowercase; Solana untouched', () => {
    expect(normalizeTxHash('evm', EVM_TX.hash.slice(2).toUpperCase())).to.equal(EVM_TX.hash);
    expect(normalizeTxHash('evm', EVM_TX.hash)).to.equal(EVM_TX.hash);
    expect(normalizeTxHash('tvm', TRON_EVM_VIEW.result.hash)).to.equal(TRON_EVM_VIEW.result.hash.slice(2));
    expect(normalizeTxHash('svm', SOL_SIG)).to.equal(SOL_SIG);
    expect(isPlausibleTxHash('evm', EVM_TX.hash)).to.equal(true);
    expect(isPlausibleTxHash('evm', '0x1234')).to.equal(false);
    expect(isPlausibleTxHash('svm', SOL_SIG)).to.equal(true);
    expect(isPlausibleTxHash('svm', '0OIl')).to.equal(false);
  });

  it('batch-get: network resolved, hashes normalized and de-duplicated in request order', () => {
    const [a, b] = EVM_BLOCK.transactions.map((t: Json) => t.hash as string);
    const q = value(normalizeBatchGet({ chain_type: 'ETHEREUM', chain_id: 1, tx_hash: [b.slice(2), a, b.toUpperCase().replace('0X', '0x')] }));
    expect(q.network.network).to.equal('ethereum-mainnet');
    expect(q.hashes).to.deep.equal([b, a]);
    expect(value(normalizeBatchGet({ chain_type: 'ethereum', chain_id: 1, tx_hash: a })).hashes).to.deep.equal([a]);
    expect(error(normalizeBatchGet({ chain_type: 'ethereum', chain_id: 999, tx_hash: a }))).to.match(/not a supported ethereum network/);
  });

  it('single transaction: no_cache true / 1 in any case; anything else reads the store first', () => {
    const base = { tx_hash: EVM_TX.hash, chain_type: 'ethereum', chain_id: '1' };
    expect(value(normalizeTransactionQuery({ ...base, no_cache: 'TRUE' })).noCache).to.equal(true);
    expect(value(normalizeTransactionQuery({ ...base, no_cache: '1' })).noCache).to.equal(true);
    expect(value(normalizeTransactionQuery({ ...base, no_cache: 'false' })).noCache).to.equal(false);
    expect(value(normalizeTransactionQuery(base)).noCache).to.equal(false);
    expect(value(normalizeTransactionQuery({ ...base, tx_hash: EVM_TX.hash.slice(2) })).txHash).to.equal(EVM_TX.hash);
    expect(error(normalizeTransactionQuery({ ...base, chain_type: 'nope' }))).to.match(/chain_type "nope" is not supported/);
  });
});
