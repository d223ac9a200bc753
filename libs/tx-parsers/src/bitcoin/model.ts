import type { TxStatus } from '../types';

/**
 * The shape-independent view of a Bitcoin transaction that both the Core and the Blockbook
 * readers produce; the record builder only sees this.
 */
export interface UtxoInput {
  /** Address of the spent output; null when the payload does not resolve prevouts. */
  address: string | null;
  /** Value of the spent output in satoshi; null when unknown. */
  amount: bigint | null;
  prevTxid: string | null;
  prevVout: number | null;
}

export interface UtxoOutput {
  /** Null for OP_RETURN, bare multisig and other scripts without a single address. */
  address: string | null;
  amount: bigint | null;
  index: number;
}

export interface UtxoTx {
  txid: string;
  version: number | null;
  coinbase: boolean;
  /** Empty for a coinbase transaction: it spends nothing. */
  inputs: UtxoInput[];
  outputs: UtxoOutput[];
  /** The fee the source states itself (Core `fee`, Blockbook `fees`), in satoshi. */
  reportedFee: bigint | null;
}

/** Where a transaction sits: its block (when known) and confirmation state. */
export interface TxPlacement {
  height: number | null;
  blockHash: string | null;
  time: number | null;
  txIndex: number | null;
  status: TxStatus;
}

/** A reader's verdict on one raw transaction: the parsed view or why it was dropped. */
export type ReadResult = { ok: true; tx: UtxoTx } | { ok: false; reason: string };
