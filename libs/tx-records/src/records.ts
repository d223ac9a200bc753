import { chainInfo } from '@chainpipe/chains';
import type { TransactionResult as GeneratedTransactionResult, HttpTxTransferList, TxV2Record } from '@chainpipe/contracts';
import type { NormalizedTx } from '@chainpipe/tx-parsers';

/**
 * One stored transaction → every shape the spec names for it. Pure. Each channel maps through
 * here, so no channel can drift from another:
 * - list format (search, multi-chain, batch-get);
 * - V2 (`GET /transactions/{tx_hash}`, the WebSocket `transaction` push and `getTxHash`);
 * - TransactionResult (webhook bodies, pool trades).
 * Their JSON Schemas are `schemas/http/tx/transfer-list` (an array of them), `common/tx-v2-record` and
 * `common/transaction-result`.
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

/** A list-format record (an item of schemas/http/tx/transfer-list.json). */
export type ListRecord = HttpTxTransferList[number];

/** The list-format record: `id` then the normalized fields in the spec's order. */
export function toListRecord(row: StoredRecord): ListRecord {
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

/**
 * The V2 record of `GET /transactions/{tx_hash}` and of pushes. `listenAddress` is null for a
 * query and the monitored addresses that matched for a push.
 */
export function toV2Record(tx: NormalizedTx, isReorgResend: boolean, listenAddress: string[] | null = null): V2Record {
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
    listenAddress,
    is_reorg_resend: isReorgResend,
  };
}

/** A V2 record (schemas/common/tx-v2-record.json). */
export type V2Record = TxV2Record;

/**
 * `transfer_type` → TransactionResult `transferType`: the spec names `NativeCoin` and `Token`
 * and "contract call"; the rest follow the same PascalCase.
 */
const TRANSFER_TYPE_NAMES: Record<NonNullable<NormalizedTx['transfer_type']>, NonNullable<TransactionResult['transferType']>> = {
  native: 'NativeCoin',
  token: 'Token',
  contract_call: 'ContractCall',
  contract_creation: 'ContractCreation',
  system: 'System',
};

/** Sets `key` only when the chain has the field (value not null): "may be absent" fields. */
function optional<T extends object>(out: T, key: string, value: unknown): void {
  if (value !== null && value !== undefined) (out as Record<string, unknown>)[key] = value;
}

/** The spec's TransactionResult (generated from `common/transaction-result`); optional fields are left out when the chain has no value. */
export type TransactionResult = GeneratedTransactionResult;

/**
 * TransactionResult (camelCase): webhook body elements and pool trades.
 *
 * Fields the spec marks "may be omitted", "may be absent" or "some chains only" (`feePayer`,
 * `txVersion`, `l1OriginHash`; in the detail arrays `fromTokenAddress`, `toTokenAddress`,
 * `mint`, `programId`, `vinIndex`, `preVoutIndex`, `txHash`, `voutIndex`) are left out when the
 * chain has no value for them; every other field is always present, null when the record has no
 * value. `bizStatus` / `bizStatusReason` are never produced (no chain gives one). Internal
 * transfers carry no contract flags in our records: `isFromContract` / `isToContract` are false.
 */
export function toTransactionResult(tx: NormalizedTx): TransactionResult {
  const out: TransactionResult = {
    chainType: chainInfo(tx.chain_type).family,
    chainId: tx.chain_id,
    height: tx.height ?? null,
    txTime: typeof tx.tx_time === 'number' ? tx.tx_time * 1000 : null,
    txHash: tx.tx_hash,
    sender: tx.sender ?? null,
    receiver: tx.receiver ?? null,
    transferType: tx.transfer_type ? TRANSFER_TYPE_NAMES[tx.transfer_type] : null,
    gasLimit: tx.gas_limit ?? null,
    gasUsed: tx.gas_used ?? null,
    gasPrice: tx.gas_price ?? null,
    maxFeePerGas: tx.max_fee_per_gas ?? null,
    maxPriorityFeePerGas: tx.max_priority_fee_per_gas ?? null,
    txFee: tx.tx_fee ?? null,
    nonce: tx.nonce ?? null,
    symbol: tx.symbol ?? null,
    decimals: tx.decimals ?? null,
    amount: tx.amount ?? null,
    txStatus: tx.tx_status ?? null,
    methodId: tx.method_id ?? null,
    methodCall: tx.method_call ?? null,
    fromDetails: (tx.from_details ?? []).map((d) => {
      const item = { address: d.address ?? null, amount: d.amount ?? null, isContract: Boolean(d.is_contract) };
      optional(item, 'vinIndex', d.vin_index);
      optional(item, 'preVoutIndex', d.pre_vout_index);
      optional(item, 'txHash', d.ref_tx_hash);
      return item;
    }),
    toDetails: (tx.to_details ?? []).map((d) => {
      const item = { address: d.address ?? null, amount: d.amount ?? null, isContract: Boolean(d.is_contract) };
      optional(item, 'voutIndex', d.vout_index);
      return item;
    }),
    internalTransactionDetails: (tx.internal_transactions ?? []).map((i) => {
      const item = {
        from: i.from_address ?? null,
        to: i.to_address ?? null,
        amount: i.amount ?? null,
        txStatus: i.tx_status ?? null,
        instruction: i.instruction ?? null,
        description: i.description ?? null,
        isFromContract: false,
        isToContract: false,
        instrIndex: i.instr_index ?? null,
        depth: i.depth ?? null,
      };
      optional(item, 'programId', i.program_id);
      return item;
    }),
    tokenTransferDetails: (tx.token_transfers ?? []).map((t) => {
      const item = {
        from: t.from_address ?? null,
        to: t.to_address ?? null,
        tokenContractAddress: t.token_contract_address ?? null,
        symbol: t.symbol ?? null,
        amount: t.amount ?? null,
        isFromContract: Boolean(t.is_from_contract),
        isToContract: Boolean(t.is_to_contract),
        decimals: t.decimals ?? null,
      };
      optional(item, 'fromTokenAddress', t.from_token_address);
      optional(item, 'toTokenAddress', t.to_token_address);
      optional(item, 'mint', t.mint);
      optional(item, 'programId', t.program_id);
      optional(item, 'tokenId', t.token_id);
      return item;
    }),
  };
  optional(out, 'feePayer', tx.fee_payer);
  optional(out, 'txVersion', tx.tx_version);
  optional(out, 'l1OriginHash', tx.l1_origin_hash);
  return out;
}

