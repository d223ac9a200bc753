import type { ChainFamily, ChainType } from '@chainpipe/chains';
import type { NormalizedTx } from '@chainpipe/contracts';

/**
 * The normalized transaction record every chain parser produces: generated from
 * schemas/common/normalized-tx.json (field names and meanings follow the list format of the
 * address monitoring spec; amounts are decimal strings of the smallest unit, never floats).
 */
export type { NormalizedTx, TokenTransfer, FromDetail, ToDetail, InternalTransaction } from '@chainpipe/contracts';

export type TxStatus = NonNullable<NormalizedTx['tx_status']>;

/** What the top-level `sender → receiver, amount` of a record describes (see the schema's `transfer_type`). */
export type TransferType = NonNullable<NormalizedTx['transfer_type']>;

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
