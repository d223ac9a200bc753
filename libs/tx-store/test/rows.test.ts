import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { addressIndexEntries, type NormalizedTx } from '@chainpipe/tx-parsers';
import {
  INDEX_INSERT_COLUMNS,
  PG_MAX_BIND_PARAMS,
  TX_INSERT_COLUMNS,
  chunkRows,
  indexRowArrays,
  indexRowValues,
  txRowArrays,
  recordJson,
  rowsPerStatement,
  tokenIndexRowValues,
  txRowValues,
  uniqueByHash,
  valuesPlaceholders,
} from '../src';
import { assertSameChain, flatten, storedRecord } from '../src/rows';
import { evmBlockItem, parseFixture } from '@chainpipe/testing';

const eth = networkByName('ethereum-mainnet')!;
const txs = parseFixture('evm', evmBlockItem(), eth).transactions;

describe('tx-store rows (pure)', () => {
  describe('statement sizing', () => {
    it('fits as many rows as the parameter budget allows, never above Postgres\'s 65535', () => {
      expect(rowsPerStatement(10, 30_000)).to.equal(3000);
      expect(rowsPerStatement(5, 30_000)).to.equal(6000);
      expect(rowsPerStatement(10, 1_000_000)).to.equal(Math.floor(PG_MAX_BIND_PARAMS / 10));
      expect(() => rowsPerStatement(10, 9)).to.throw(RangeError);
      expect(() => rowsPerStatement(0)).to.throw(RangeError);
    });

    it('chunks 1034 rows into statements within the budget, order kept', () => {
      const rows = Array.from({ length: 1034 }, (_, i) => [i, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] as const);
      const parts = chunkRows(rows, 10, 2000);
      expect(parts.map((p) => p.length)).to.deep.equal([200, 200, 200, 200, 200, 34]);
      expect(parts.every((p) => p.length * 10 <= 2000)).to.equal(true);
      expect(parts.flat().map((r) => r[0])).to.deep.equal(rows.map((r) => r[0]));
      expect(chunkRows([], 10)).to.deep.equal([]);
    });

    it('writes one placeholder per value, with the casts asked for', () => {
      expect(valuesPlaceholders(2, 3, { 2: 'jsonb' })).to.equal('(?, ?, ?::jsonb), (?, ?, ?::jsonb)');
      const sql = valuesPlaceholders(125, TX_INSERT_COLUMNS.length);
      expect(sql.match(/\?/g)).to.have.length(125 * TX_INSERT_COLUMNS.length);
      expect(flatten([[1, 'a'], [2, 'b']])).to.deep.equal([1, 'a', 2, 'b']);
    });
  });

  describe('row values', () => {
    it('maps a record onto the transaction columns in insert order, the whole record as JSON', () => {
      const tx = txs[0];
      const values = txRowValues(eth, tx);
      expect(values).to.have.length(TX_INSERT_COLUMNS.length);
      const byColumn = Object.fromEntries(TX_INSERT_COLUMNS.map((c, i) => [c, values[i]]));
      expect(byColumn).to.deep.include({ chain_type: 'ethereum', chain_id: 1, network: 'ethereum-mainnet', tx_hash: tx.tx_hash, block_hash: tx.block_hash, height: tx.height, tx_index: tx.tx_index, tx_time: tx.tx_time, tx_status: tx.tx_status });
      expect(JSON.parse(byColumn.record as string)).to.deep.equal(tx);
    });

    it('builds one index row per address of the record, with its tokens and the record\'s transfer_type', () => {
      const tx = txs.find((t) => t.token_transfers.length > 0)!;
      const rows = indexRowValues(eth, '42', tx);
      const entries = addressIndexEntries(tx, 'evm');
      expect(rows).to.deep.equal(entries.map((e) => [e.address, 'ethereum', 1, '42', e.tokens, tx.transfer_type]));
      expect(rows.every((r) => r.length === INDEX_INSERT_COLUMNS.length)).to.equal(true);
      expect(rows.some((r) => r[4].length > 0)).to.equal(true);
      // A record without a type (an EVM receipt alone) leaves the column null, never "undefined".
      expect(indexRowValues(eth, '42', { ...tx, transfer_type: null }).every((r) => r[5] === null)).to.equal(true);
    });

    it('builds one token index row per (address, token it moved), none for addresses that moved no token', () => {
      const withTokens = txs.filter((t) => t.token_transfers.length > 0);
      expect(withTokens.length).to.be.greaterThan(10);
      for (const tx of withTokens) {
        const rows = indexRowValues(eth, '7', tx);
        const tokenRows = tokenIndexRowValues(rows);
        const expected = addressIndexEntries(tx, 'evm').flatMap((e) => e.tokens.map((token) => [e.address, token, 'ethereum', 1, '7', tx.transfer_type]));
        expect(tokenRows).to.deep.equal(expected);
        // Each pair once: the primary key (address, token, chain, tx) of tx.address_token_index.
        expect(new Set(tokenRows.map((r) => `${r[0]} ${r[1]}`)).size).to.equal(tokenRows.length);
        // Every token the record moves is in there, for each of its parties (from the record itself).
        for (const t of tx.token_transfers) {
          for (const party of [t.from_address, t.to_address].filter((a): a is string => !!a)) {
            expect(tokenRows.some((r) => r[0] === party.toLowerCase() && r[1] === (t.token_contract_address ?? '').toLowerCase()), `${tx.tx_hash} ${party}`).to.equal(true);
          }
        }
      }
      expect(tokenIndexRowValues(indexRowValues(eth, '7', txs.find((t) => t.token_transfers.length === 0)!))).to.deep.equal([]);
    });

    it('refuses a record of another chain than the network it is stored under', () => {
      expect(() => assertSameChain(eth, { ...txs[0], chain_id: 56 })).to.throw(TypeError, /not of network ethereum-mainnet/);
      expect(() => assertSameChain(eth, txs[0])).to.not.throw();
    });

    it('keeps the first of duplicate hashes (one upsert may not touch a row twice)', () => {
      const dup: NormalizedTx = { ...txs[1], tx_hash: txs[0].tx_hash };
      expect(uniqueByHash([txs[0], dup, txs[2]])).to.deep.equal([txs[0], txs[2]]);
    });

    it('rebuilds the stored record from the returned columns (int8 arrives as text)', () => {
      const tx = txs[0];
      const rec = storedRecord(tx, { tx_status: 'failed', block_hash: '0xabc', height: '17', tx_index: 3, tx_time: '1700000000' });
      expect(rec).to.deep.equal({ ...tx, tx_status: 'failed', block_hash: '0xabc', height: 17, tx_index: 3, tx_time: 1_700_000_000 });
      expect(storedRecord(tx, { tx_status: null, block_hash: null, height: null, tx_index: null, tx_time: null }).height).to.equal(null);
    });
  });

  describe('upsert arrays', () => {
    it('transactions: one array per column but the record, then the records as one JSON array, row order kept', () => {
      const rows = txs.slice(0, 7).map((t) => txRowValues(eth, t));
      const arrays = txRowArrays(rows);
      expect(arrays).to.have.length(TX_INSERT_COLUMNS.length);
      for (let c = 0; c < TX_INSERT_COLUMNS.length - 1; c++) expect(arrays[c], TX_INSERT_COLUMNS[c]).to.deep.equal(rows.map((r) => r[c]));
      expect(JSON.parse(arrays[TX_INSERT_COLUMNS.length - 1] as string)).to.deep.equal(txs.slice(0, 7));
      expect(txRowArrays([])).to.deep.equal([[], [], [], [], [], [], [], [], [], '[]']);
    });

    it('address index: one array per column in INDEX_INSERT_COLUMNS order, tokens as JSON arrays, null types kept', () => {
      const rows = txs.flatMap((t, i) => indexRowValues(eth, String(100 + i), i === 0 ? { ...t, transfer_type: null } : t));
      const arrays = indexRowArrays(rows);
      expect(arrays).to.have.length(INDEX_INSERT_COLUMNS.length);
      expect(arrays.every((a) => a.length === rows.length)).to.equal(true);
      // Back to rows, every value where it was (tokens through JSON, as Postgres reads them).
      const back = rows.map((_, i) => [arrays[0][i], arrays[1][i], arrays[2][i], arrays[3][i], JSON.parse(arrays[4][i]), arrays[5][i]]);
      expect(back).to.deep.equal(rows);
      expect(arrays[4].some((j) => j !== '[]')).to.equal(true);
      expect(arrays[5][0]).to.equal(null);
      expect(indexRowArrays([])).to.deep.equal([[], [], [], [], [], []]);
    });
  });

  describe('recordJson', () => {
    const roundTrip = (s: string) => JSON.parse(recordJson({ ...txs[0], method_call: s })).method_call;

    it('turns U+0000 (which Postgres text and jsonb refuse) into U+FFFD', () => {
      expect(roundTrip('a\u0000b\u0000')).to.equal('a\ufffdb\ufffd');
      expect(roundTrip('\\\u0000')).to.equal('\\\ufffd');
    });

    it('leaves the six characters backslash-u-0-0-0-0 and everything else alone', () => {
      expect(roundTrip('\\u0000')).to.equal('\\u0000');
      expect(roundTrip('\\\\u0000')).to.equal('\\\\u0000');
      expect(recordJson(txs[0])).to.equal(JSON.stringify(txs[0]));
    });
  });
});
