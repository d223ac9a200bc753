import { emptyTx } from '../record-base';
import type { ChainContext, NormalizedTx, TxStatus } from '../types';
import { asArray, asObject, asString } from './json';

/** Block-level facts every record of a block repeats. */
export interface BlockFacts {
  height: number | null;
  blockHash: string | null;
  /** Unix seconds. */
  time: number | null;
}

export function emptyRecord(ctx: ChainContext, block: BlockFacts, txHash: string, txIndex: number | null): NormalizedTx {
  return { ...emptyTx(ctx, txHash), height: block.height, block_hash: block.blockHash, tx_time: block.time, tx_index: txIndex };
}

/** Tron result codes: only SUCCESS succeeded (REVERT, OUT_OF_ENERGY, OUT_OF_TIME… failed). */
export function statusFromResultCode(code: unknown): TxStatus | null {
  const s = asString(code);
  if (!s) return null;
  return s.toUpperCase() === 'SUCCESS' ? 'success' : 'failed';
}

/** eth receipt `status`: 0x1 success, 0x0 failed. */
export function statusFromReceipt(receipt: unknown): TxStatus | null {
  const status = asString(asObject(receipt)?.status)?.toLowerCase();
  if (status === '0x1' || status === '1') return 'success';
  if (status === '0x0' || status === '0') return 'failed';
  return null;
}

/**
 * Status from a gettransactioninfo: `receipt.result` for VM transactions; otherwise a top-level
 * `result: "FAILED"` marks a failure. Infos of system contracts carry neither (null → caller
 * falls back to the block's `ret`).
 */
export function statusFromInfo(info: unknown): TxStatus | null {
  const o = asObject(info);
  if (!o) return null;
  const fromReceipt = statusFromResultCode(asObject(o.receipt)?.result);
  if (fromReceipt) return fromReceipt;
  return asString(o.result)?.toUpperCase() === 'FAILED' ? 'failed' : null;
}

/** First `ret` entry of a node transaction (`{contractRet, fee?}`). */
export function firstRet(tx: unknown): Record<string, unknown> | undefined {
  return asObject(asArray(asObject(tx)?.ret)[0]);
}
