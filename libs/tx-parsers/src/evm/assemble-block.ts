import type { ChainContext, NormalizedTx, ParsedBlock, ParseIssue } from '../types';
import { minerOf, type EvmChainRules } from './chain-specific';
import { hash32, isObject, quantity, safeInt } from './hex';
import type { BlockBundle, CallTrace } from './shape';
import { summarizeCallFrame, summarizeParityTraces } from './traces';
import { buildRecord, type BlockInfo, type TxSources } from './tx-record';
import { withdrawalRecords } from './withdrawals';

type Json = any;

type Report = (txHash: string | null, txIndex: number | null, reason: string) => void;

/** Joins a block's transactions, receipts and traces by transaction hash (Maps, no scans). */
class TxIndex {
  readonly slots: TxSources[] = [];
  private readonly byHash = new Map<string, TxSources>();
  private readonly byPosition = new Map<number, TxSources>();

  get(hash: string): TxSources | undefined {
    return this.byHash.get(hash);
  }

  atPosition(index: number): TxSources | undefined {
    return this.byPosition.get(index);
  }

  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  add(slot: TxSources): void {
    this.slots.push(slot);
    this.byHash.set(slot.hash, slot);
    if (slot.index !== null && !this.byPosition.has(slot.index)) this.byPosition.set(slot.index, slot);
  }
}

function firstOf<T>(items: unknown[] | null, pick: (o: Json) => T | null): T | null {
  if (!items) return null;
  for (const it of items) {
    if (!isObject(it)) continue;
    const v = pick(it);
    if (v !== null) return v;
  }
  return null;
}

function blockInfoOf(ctx: ChainContext, bundle: BlockBundle, blockIndex: number): BlockInfo & { parentHash: string | null } {
  const b: Json = bundle.block;
  const objectTxs = bundle.txs.filter(isObject);
  const sources = [bundle.receipts, objectTxs, bundle.parityTraces];
  let height = safeInt(b?.number);
  for (const src of sources) height = height ?? firstOf(src, (o) => safeInt(o.blockNumber));
  // Trace-only elements of geth carry no block number; streamers send one element per block.
  const start = ctx.batchStartRange;
  if (height === null && b === null && typeof start === 'number' && Number.isSafeInteger(start) && start >= 0) {
    height = start + blockIndex;
  }
  let hash = hash32(b?.hash);
  for (const src of sources) hash = hash ?? firstOf(src, (o) => hash32(o.blockHash));
  return {
    height,
    hash,
    parentHash: hash32(b?.parentHash),
    time: safeInt(b?.timestamp),
    miner: minerOf(b),
    baseFee: b ? quantity(b.baseFeePerGas) : null,
  };
}

/** Adds the block's transactions; returns their slots aligned with the block's positions. */
function addTransactions(bundle: BlockBundle, index: TxIndex, report: Report): Array<TxSources | undefined> {
  return bundle.txs.map((entry, position): TxSources | undefined => {
    // Hash-only blocks still fix each transaction's hash and position for receipts and traces.
    const tx: Json = isObject(entry) ? entry : null;
    const hash = hash32(tx ? tx.hash : entry);
    const txIndex = (tx ? safeInt(tx.transactionIndex) : null) ?? position;
    if (tx === null && typeof entry !== 'string') {
      report(null, position, 'transaction is not an object');
      return undefined;
    }
    if (hash === null) {
      report(null, txIndex, 'transaction without a valid hash');
      return undefined;
    }
    if (index.has(hash)) {
      report(hash, txIndex, 'duplicate transaction hash in block');
      return undefined;
    }
    const slot: TxSources = { hash, index: txIndex, tx, receipt: null, trace: null };
    index.add(slot);
    return slot;
  });
}

function addReceipts(receipts: unknown[], index: TxIndex, listed: boolean, report: Report): void {
  receipts.forEach((entry, position) => {
    if (!isObject(entry)) {
      report(null, position, 'receipt is not an object');
      return;
    }
    const r: Json = entry;
    const hash = hash32(r.transactionHash);
    const txIndex = safeInt(r.transactionIndex);
    const slot = hash !== null ? index.get(hash) : txIndex !== null ? index.atPosition(txIndex) : undefined;
    if (slot === undefined) {
      if (hash === null) report(null, txIndex ?? position, 'receipt without a valid transaction hash');
      else if (listed) report(hash, txIndex, 'receipt matches no transaction of the block');
      else index.add({ hash, index: txIndex, tx: null, receipt: r, trace: null });
      return;
    }
    if (slot.receipt !== null) report(slot.hash, slot.index, 'duplicate receipt');
    else slot.receipt = r;
  });
}

/**
 * callTracer results carry `txHash` on recent geth only; older ones are matched by position, which
 * is only trusted when there is exactly one trace per known transaction.
 */
function addCallTraces(
  traces: CallTrace[],
  index: TxIndex,
  ordered: Array<TxSources | undefined>,
  listed: boolean,
  report: Report,
): void {
  const positional = traces.length === ordered.length;
  for (const ct of traces) {
    let slot = ct.txHash !== null ? index.get(ct.txHash) : positional ? ordered[ct.position] : undefined;
    if (slot === undefined) {
      if (ct.txHash === null) {
        report(null, ct.position, 'trace without transaction hash matches no transaction');
        continue;
      }
      if (listed) {
        report(ct.txHash, ct.position, 'trace matches no transaction of the block');
        continue;
      }
      if (ct.frame === null) {
        report(ct.txHash, ct.position, 'trace without result frame');
        continue;
      }
      slot = { hash: ct.txHash, index: ct.position, tx: null, receipt: null, trace: null };
      index.add(slot);
    }
    if (ct.frame === null) report(slot.hash, slot.index, 'trace without result frame: internal transfers unknown');
    else if (slot.trace !== null) report(slot.hash, slot.index, 'duplicate trace');
    else slot.trace = summarizeCallFrame(ct.frame);
  }
}

function addParityTraces(traces: unknown[], index: TxIndex, listed: boolean, report: Report): void {
  const groups = new Map<string, Json[]>();
  traces.forEach((entry, position) => {
    if (!isObject(entry)) {
      report(null, position, 'trace is not an object');
      return;
    }
    const t: Json = entry;
    // Block and uncle rewards have no transaction: they are not transactions.
    if (t.transactionHash === null || t.transactionHash === undefined) return;
    const hash = hash32(t.transactionHash);
    if (hash === null) {
      report(null, safeInt(t.transactionPosition), 'trace with invalid transaction hash');
      return;
    }
    const group = groups.get(hash);
    if (group) group.push(t);
    else groups.set(hash, [t]);
  });
  for (const [hash, group] of groups) {
    const txIndex = safeInt(group[0].transactionPosition);
    let slot = index.get(hash);
    if (slot === undefined) {
      if (listed) {
        report(hash, txIndex, 'trace matches no transaction of the block');
        continue;
      }
      slot = { hash, index: txIndex, tx: null, receipt: null, trace: null };
      index.add(slot);
    }
    if (slot.trace !== null) report(hash, slot.index, 'duplicate trace');
    else slot.trace = summarizeParityTraces(group);
  }
}

function byTxIndex(a: TxSources, b: TxSources): number {
  if (a.index === b.index) return 0;
  if (a.index === null) return 1;
  if (b.index === null) return -1;
  return a.index - b.index;
}

/** One streamer element → its block reference and transaction records. */
export function assembleBlock(
  ctx: ChainContext,
  rules: EvmChainRules,
  bundle: BlockBundle,
  blockIndex: number,
  issues: ParseIssue[],
): ParsedBlock | null {
  const report: Report = (tx_hash, tx_index, reason) => issues.push({ block_index: blockIndex, tx_hash, tx_index, reason });
  for (const w of bundle.warnings) report(null, null, w);

  const info = blockInfoOf(ctx, bundle, blockIndex);
  const index = new TxIndex();
  // A block's transaction list is complete: receipts or traces outside it belong elsewhere.
  const listed = isObject(bundle.block) && Array.isArray(bundle.block.transactions);
  const blockOrder = addTransactions(bundle, index, report);
  if (bundle.receipts) addReceipts(bundle.receipts, index, listed, report);
  // Position matching needs the block's own order (invalid entries included) or, without a
  // block, the receipts' transaction indexes.
  const ordered = listed ? blockOrder : index.slots.slice().sort(byTxIndex);
  if (bundle.callTraces) addCallTraces(bundle.callTraces, index, ordered, listed, report);
  if (bundle.parityTraces) addParityTraces(bundle.parityTraces, index, listed, report);

  const slots = listed ? index.slots : index.slots.slice().sort(byTxIndex);
  const transactions: NormalizedTx[] = [];
  for (const slot of slots) {
    if (slot.tx === null && slot.receipt === null && slot.trace === null) {
      report(slot.hash, slot.index, 'block lists the transaction by hash only: no details');
      continue;
    }
    try {
      transactions.push(buildRecord(ctx, rules, info, slot));
    } catch (err) {
      report(slot.hash, slot.index, `transaction not parsed: ${errorText(err)}`);
    }
  }
  transactions.push(...withdrawalRecords(ctx, bundle.block, info, report));

  const block = { height: info.height, hash: info.hash, parent_hash: info.parentHash, time: info.time };
  const empty = block.height === null && block.hash === null && block.parent_hash === null && block.time === null;
  if (empty && transactions.length === 0) return null;
  return { block, transactions };
}

export function errorText(err: unknown): string {
  try {
    const text = err instanceof Error ? err.message : String(err);
    return text.slice(0, 200);
  } catch {
    return 'unknown error';
  }
}
