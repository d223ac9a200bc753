import { expect } from 'chai';
import type { ParseResult } from '../../src/types';

const DIGITS = /^[0-9]+$/;

/** Record fields holding a decimal string of the smallest unit, or null. */
export type AmountField = 'amount' | 'tx_fee' | 'gas_limit' | 'gas_used' | 'gas_price' | 'max_fee_per_gas' | 'max_priority_fee_per_gas' | 'nonce';

/** Record lists whose entries carry an `amount`. */
export type EntryList = 'token_transfers' | 'internal_transactions' | 'from_details' | 'to_details';

export interface WellFormedOptions {
  /** Names the case in assertion messages. */
  label?: string;
  /** What every `tx_hash` must match; by default any non-empty string. */
  txHash?: RegExp;
  /** Record fields that must be null or a decimal string. */
  amounts: readonly AmountField[];
  /** Record lists whose entries' `amount` must be null or a decimal string. */
  entryAmounts: readonly EntryList[];
}

function expectAmount(v: unknown, what: string, label: string | undefined): void {
  if (v !== null) expect(typeof v === 'string' && DIGITS.test(v), `${label ? `${label}: ` : ''}${what} = ${String(v)}`).to.equal(true);
}

/**
 * The shape every parser promises whatever its input: blocks and issues as arrays, each record
 * with a hash, its lists and its amounts as decimal strings (or null), and the whole result
 * serializable (records go to JSON storage: nothing like a bigint may slip in).
 */
export function expectWellFormedParseResult(result: ParseResult, options: WellFormedOptions): void {
  const { label } = options;
  expect(result, label).to.be.an('object');
  expect(result.blocks, label).to.be.an('array');
  expect(result.issues, label).to.be.an('array');
  for (const issue of result.issues) {
    expect(issue.block_index, label).to.be.a('number');
    expect(issue.reason, label).to.be.a('string');
  }
  for (const b of result.blocks) {
    expect(b.block, label).to.be.an('object');
    expect(b.transactions, label).to.be.an('array');
    for (const t of b.transactions) {
      if (options.txHash) expect(t.tx_hash, label).to.be.a('string').and.match(options.txHash);
      else expect(t.tx_hash, label).to.be.a('string').and.not.equal('');
      for (const field of options.amounts) expectAmount(t[field], field, label);
      expect(t.token_transfers, label).to.be.an('array');
      expect(t.internal_transactions, label).to.be.an('array');
      expect(t.from_details, label).to.be.an('array');
      expect(t.to_details, label).to.be.an('array');
      for (const list of options.entryAmounts) {
        for (const entry of t[list]) expectAmount(entry.amount, `${list} amount`, label);
      }
    }
  }
  expect(() => JSON.stringify(result), label).to.not.throw();
}
