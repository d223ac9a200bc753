import type { ChainFamily, ChainType } from '@chainpipe/chains';

/**
 * The normalized transaction record every chain parser produces. Field names and meanings follow
 * the list format of the address monitoring spec; amounts are decimal strings of the smallest
 * unit (wei, lamports, sun, satoshi), never floats.
 */

export type TxStatus = 'success' | 'failed' | 'pending';

/**
 * What the top-level `sender → receiver, amount` of a record describes:
 * - `native`: a native coin transfer (value > 0) and no token transfer;
 * - `token`: the transaction moves tokens (see `token_transfers`); the top-level amount stays the
 *   native value carried by the transaction itself;
 * - `contract_call`: a call with no value and no token movement;
 * - `contract_creation`: deploys a contract (`receiver` is the created contract when known);
 * - `system`: chain-internal transactions (L1-info deposits, validator deposits, coinbase…).
 */
export type TransferType = 'native' | 'token' | 'contract_call' | 'contract_creation' | 'system';

export interface TokenTransfer {
  from_address: string | null;
  to_address: string | null;
  token_contract_address: string | null;
  symbol: string | null;
  /** Raw amount in the token's smallest unit (decimal string). For NFTs (ERC-721) the token id. */
  amount: string | null;
  /** Solana: the token accounts moved between; null elsewhere. */
  from_token_address: string | null;
  to_token_address: string | null;
  /** Solana SPL mint (same as token_contract_address there); null elsewhere. */
  mint: string | null;
  program_id: string | null;
  decimals: number | null;
  is_from_contract: boolean;
  is_to_contract: boolean;
  /** `erc20`, `erc721`, `trc20`, `trc10`, `spl`… */
  standard: string | null;
  /** Position of the source log / instruction inside the transaction, for stable ordering. */
  log_index: number | null;
}

export interface FromDetail {
  address: string | null;
  amount: string | null;
  vin_index: string | null;
  pre_vout_index: string | null;
  ref_tx_hash: string | null;
  is_contract: boolean;
}

export interface ToDetail {
  address: string | null;
  amount: string | null;
  vout_index: string | null;
  is_contract: boolean;
}

export interface InternalTransaction {
  from_address: string | null;
  to_address: string | null;
  amount: string | null;
  tx_status: TxStatus | null;
  program_id: string | null;
  /** EVM: call type (`call`, `create`, `selfdestruct`…); Solana: instruction name. */
  instruction: string | null;
  description: string | null;
  instr_index: number | null;
  depth: number | null;
}

export interface NormalizedTx {
  chain_type: ChainType;
  chain_id: number;
  height: number | null;
  /** Hash of the block the transaction was seen in (reorg detection); null when unknown. */
  block_hash: string | null;
  /** Unix seconds. */
  tx_time: number | null;
  tx_hash: string;
  /** Position inside the block; null when unknown. */
  tx_index: number | null;
  tx_version: number | null;
  sender: string | null;
  receiver: string | null;
  fee_payer: string | null;
  transfer_type: TransferType | null;
  amount: string | null;
  symbol: string | null;
  decimals: number | null;
  tx_status: TxStatus | null;
  tx_fee: string | null;
  gas_limit: string | null;
  gas_used: string | null;
  gas_price: string | null;
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  nonce: string | null;
  method_id: string | null;
  method_call: string | null;
  l1_origin_hash: string | null;
  token_transfers: TokenTransfer[];
  from_details: FromDetail[];
  to_details: ToDetail[];
  internal_transactions: InternalTransaction[];
}

/** The block a parse produced, used for idempotency and reorg detection. */
export interface BlockRef {
  height: number | null;
  hash: string | null;
  parent_hash: string | null;
  /** Unix seconds. */
  time: number | null;
}

/** A transaction (or a whole block) that could not be parsed, with the reason. */
export interface ParseIssue {
  /** Index of the block inside the payload. */
  block_index: number;
  /** Transaction hash when known, else its index inside the block. */
  tx_hash: string | null;
  tx_index: number | null;
  reason: string;
}

export interface ParsedBlock {
  block: BlockRef;
  transactions: NormalizedTx[];
}

export interface ParseResult {
  blocks: ParsedBlock[];
  /** Problems that dropped a transaction or a block; the rest of the payload still parsed. */
  issues: ParseIssue[];
}

/** What a parser is told about where the payload came from. */
export interface ChainContext {
  chainType: ChainType;
  chainId: number;
  family: ChainFamily;
  nativeSymbol: string;
  nativeDecimals: number;
  /** Streamer dataset (`block`, `block_with_receipts`, `receipts`, `trace_blocks`, `debug_traces`…), when known. */
  dataset?: string | null;
  /** First block (slot/height) of the batch from metadata: Solana blocks carry no slot of their own. */
  batchStartRange?: number | null;
}
