import type { NormalizedTx } from '@chainpipe/contracts';

/** The source token of an order, as far as a deposit check needs it. */
export interface DepositToken {
  isNative: boolean;
  /** Contract (EVM, Tron) or mint (Solana) of a token; null for the native coin. */
  contractAddress: string | null;
  /** Chain family of the deposit network: EVM compares case-insensitively, Base58 forms do not. */
  family: 'evm' | 'svm' | 'tvm' | 'utxo';
}

/**
 * What a confirmed transaction paid to `address` in the order's source token (smallest unit):
 * the native coin through the top-level transfer, EVM internal transfers and Bitcoin outputs; a
 * token through its transfers of that contract. 0 for anything else, and for transactions that
 * are not successful (a pending one is pushed again when it settles).
 */
export function paidTo(tx: NormalizedTx, address: string, token: DepositToken): bigint {
  if (tx.tx_status !== 'success') return 0n;
  const evm = token.family === 'evm';
  const same = (a: string | null | undefined, b: string | null) =>
    a !== null && a !== undefined && b !== null && (evm ? a.toLowerCase() === b.toLowerCase() : a === b);
  const amount = (v: string | null | undefined): bigint => (v && /^[0-9]+$/.test(v) ? BigInt(v) : 0n);
  let total = 0n;
  if (token.isNative) {
    if (token.family === 'utxo') {
      for (const out of tx.to_details) if (same(out.address, address)) total += amount(out.amount);
      return total;
    }
    if (same(tx.receiver, address)) total += amount(tx.amount);
    // EVM internal transfers are the frames below the top call (a contract wallet paying); on
    // Solana the instructions repeat the top-level transfer, so only the record's own counts
    if (evm) for (const it of tx.internal_transactions) if (it.tx_status !== 'failed' && same(it.to_address, address)) total += amount(it.amount);
    return total;
  }
  for (const t of tx.token_transfers) {
    if (t.token_id) continue; // NFTs never pay an order
    if (same(t.token_contract_address, token.contractAddress) && same(t.to_address, address)) total += amount(t.amount);
  }
  return total;
}

/** What the chain's node answered for a deposit transaction (`fetchFromOrigin`'s answer). */
export type ChainTxLookup = { found: false } | { found: true; tx: NormalizedTx };

export type DepositVerdict =
  /** The node shows the transaction mined and successful, paying `amount` (> 0) of the source token to the address. */
  | { kind: 'verified'; amount: bigint; txTime: Date | null }
  /** Not decided yet: the node does not know it (yet), or it is not mined. */
  | { kind: 'wait'; reason: 'unknown_to_node' | 'not_mined' }
  /** The node does not know it and the window has passed: a transaction the chain never had. */
  | { kind: 'not_on_chain' }
  /**
   * Mined, and paying the address nothing of the source token (failed, another token, another
   * recipient); `other`: what a successful one paid the address in another asset.
   */
  | { kind: 'not_paid'; status: string; other?: OtherPayment };

/** A payment to the address in another asset than the order's source token: a token contract (mint), or `native`. */
export interface OtherPayment {
  asset: string;
  amount: bigint;
}

/** What a successful transaction paid `address` in another asset than `token` (the first such asset), if anything. */
export function otherPaymentTo(tx: NormalizedTx, address: string, token: DepositToken): OtherPayment | undefined {
  if (tx.tx_status !== 'success') return undefined;
  if (!token.isNative) {
    const native = paidTo(tx, address, { ...token, isNative: true, contractAddress: null });
    if (native > 0n) return { asset: 'native', amount: native };
  }
  const evm = token.family === 'evm';
  const same = (a: string | null | undefined, b: string | null) => a !== null && a !== undefined && b !== null && (evm ? a.toLowerCase() === b.toLowerCase() : a === b);
  for (const t of tx.token_transfers) {
    if (t.token_id || !t.token_contract_address || !same(t.to_address, address)) continue;
    if (!token.isNative && same(t.token_contract_address, token.contractAddress)) continue;
    const amount = paidTo(tx, address, { ...token, isNative: false, contractAddress: t.token_contract_address });
    if (amount > 0n) return { asset: t.token_contract_address, amount };
  }
  return undefined;
}

/**
 * A deposit as the chain's node shows it (docs/decisions.md#d161): only a transaction the node
 * knows, mined and successful, paying the order's address in the order's source token (`paidTo`
 * over the node's own record, never the pushed one) pays an order, by the amount the node shows.
 * `pastWindow`: the verification window since the push has passed, so a transaction the node
 * still does not know never will be counted.
 */
export function verifyDeposit(lookup: ChainTxLookup, address: string, token: DepositToken, pastWindow: boolean): DepositVerdict {
  if (!lookup.found) return pastWindow ? { kind: 'not_on_chain' } : { kind: 'wait', reason: 'unknown_to_node' };
  const { tx } = lookup;
  if (tx.tx_status === 'pending' || tx.height === null) return { kind: 'wait', reason: 'not_mined' };
  const amount = paidTo(tx, address, token);
  if (amount === 0n) {
    const other = otherPaymentTo(tx, address, token);
    return { kind: 'not_paid', status: tx.tx_status ?? 'unknown', ...(other ? { other } : {}) };
  }
  return { kind: 'verified', amount, txTime: tx.tx_time ? new Date(Number(tx.tx_time) * 1000) : null };
}
