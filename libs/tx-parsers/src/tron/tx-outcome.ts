import type { NormalizedTx } from '../types';
import type { JsonObject } from './json';

/** One transaction's parse: a record, or why it was dropped. */
export type TxOutcome =
  | { ok: true; record: NormalizedTx }
  | { ok: false; txHash: string | null; reason: string };

/** Execution data found for a transaction next to the block. */
export interface TxExtras {
  /** /wallet/gettransactioninfo* object. */
  info?: JsonObject;
  /** eth JSON-RPC receipt. */
  receipt?: JsonObject;
  /** eth JSON-RPC transaction object (composite dataset's `block`). */
  evmTx?: JsonObject;
}

export type ExtrasLookup = (txHash: string) => TxExtras;
