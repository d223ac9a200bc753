import type { NormalizedTx } from '@chainpipe/tx-parsers';

/**
 * Stored transaction → the two response formats of the spec ("Transaction record, list format"
 * and "V2 format"). Pure.
 *
 * List format = the normalized record's fields (including `block_hash` and `tx_index`, which the
 * spec does not list but which cost nothing and help reorg-aware clients) plus `id`, the
 * internal transaction id that is the pagination cursor.
 *
 * V2 renames what the spec's V2 table renames, sends `txTime` in milliseconds, adds
 * `listenAddress` (null: a query has no monitored address that matched) and `is_reorg_resend`.
 * Decisions where the table is silent: `tx_version` becomes `txVersion` (like the other `tx_*`
 * fields of V2); items of the detail arrays keep the list format's snake_case field names (the
 * table renames only the arrays); `block_hash`, `tx_index` and `id` are not part of V2.
 */

/** What a query reads of a stored transaction. */
export interface StoredRecord {
  /** tx.transactions.id (bigint as a decimal string). */
  id: string;
  is_reorg_resend: boolean;
  record: NormalizedTx;
}

/** The list-format record: `id` then the normalized fields in the spec's order. */
export function toListRecord(row: StoredRecord) {
  const tx = row.record;
  return {
    id: Number(row.id),
    chain_type: tx.chain_type,
    chain_id: tx.chain_id,
    height: tx.height ?? null,
    block_hash: tx.block_hash ?? null,
    tx_time: tx.tx_time ?? null,
    tx_hash: tx.tx_hash,
    tx_index: tx.tx_index ?? null,
    tx_version: tx.tx_version ?? null,
    sender: tx.sender ?? null,
    receiver: tx.receiver ?? null,
    fee_payer: tx.fee_payer ?? null,
    transfer_type: tx.transfer_type ?? null,
    amount: tx.amount ?? null,
    symbol: tx.symbol ?? null,
    decimals: tx.decimals ?? null,
    tx_status: tx.tx_status ?? null,
    tx_fee: tx.tx_fee ?? null,
    gas_limit: tx.gas_limit ?? null,
    gas_used: tx.gas_used ?? null,
    gas_price: tx.gas_price ?? null,
    max_fee_per_gas: tx.max_fee_per_gas ?? null,
    max_priority_fee_per_gas: tx.max_priority_fee_per_gas ?? null,
    nonce: tx.nonce ?? null,
    method_id: tx.method_id ?? null,
    method_call: tx.method_call ?? null,
    l1_origin_hash: tx.l1_origin_hash ?? null,
    token_transfers: tx.token_transfers ?? [],
    from_details: tx.from_details ?? [],
    to_details: tx.to_details ?? [],
    internal_transactions: tx.internal_transactions ?? [],
  };
}

export type ListRecord = ReturnType<typeof toListRecord>;

/** The V2 record of `GET /transactions/{tx_hash}`. */
export function toV2Record(tx: NormalizedTx, isReorgResend: boolean) {
  return {
    chain_type: tx.chain_type,
    chain_id: tx.chain_id,
    height: tx.height ?? null,
    txhash: tx.tx_hash,
    txTime: typeof tx.tx_time === 'number' ? tx.tx_time * 1000 : null,
    txVersion: tx.tx_version ?? null,
    sender: tx.sender ?? null,
    receiver: tx.receiver ?? null,
    fee_payer: tx.fee_payer ?? null,
    transfer_type: tx.transfer_type ?? null,
    amount: tx.amount ?? null,
    symbol: tx.symbol ?? null,
    decimals: tx.decimals ?? null,
    txStatus: tx.tx_status ?? null,
    txFee: tx.tx_fee ?? null,
    gasLimit: tx.gas_limit ?? null,
    gasUsed: tx.gas_used ?? null,
    gasPrice: tx.gas_price ?? null,
    max_fee_per_gas: tx.max_fee_per_gas ?? null,
    max_priority_fee_per_gas: tx.max_priority_fee_per_gas ?? null,
    nonce: tx.nonce ?? null,
    methodId: tx.method_id ?? null,
    methodCall: tx.method_call ?? null,
    l1OriginHash: tx.l1_origin_hash ?? null,
    tokenTransferDetails: tx.token_transfers ?? [],
    fromDetails: tx.from_details ?? [],
    toDetails: tx.to_details ?? [],
    internalTransactionDetails: tx.internal_transactions ?? [],
    listenAddress: null,
    is_reorg_resend: isReorgResend,
  };
}

export type V2Record = ReturnType<typeof toV2Record>;
