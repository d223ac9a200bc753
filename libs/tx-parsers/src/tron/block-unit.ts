import type { BlockRef, ChainContext, ParsedBlock, ParseIssue } from '../types';
import { parseEvmViewTx } from './evm-view-tx';
import { asArray, asObject, msToSeconds, normalizeHash, toSafeInt, type JsonObject } from './json';
import { parseNativeTx } from './native-tx';
import type { BlockFacts } from './record';
import type { TxExtras, TxOutcome } from './tx-outcome';

/** Everything delivered about one block: its node and/or eth view, or a group of bare transactions. */
export interface BlockUnit {
  /** Index of the (first) payload element the unit came from. */
  blockIndex: number;
  native: JsonObject | null;
  evm: JsonObject | null;
  /** TronGrid-style transactions delivered without a block, grouped by their blockNumber. */
  bareTxs: JsonObject[] | null;
  infos: JsonObject[];
  receipts: JsonObject[];
}

function nativeHeader(native: JsonObject | null): JsonObject | undefined {
  return asObject(asObject(native?.block_header)?.raw_data);
}

/** The eth view reports Tron's millisecond timestamps; tolerate seconds too. */
function evmTimeSeconds(v: unknown): number | null {
  const t = toSafeInt(v);
  if (t === null) return null;
  return t > 1e11 ? Math.floor(t / 1000) : t;
}

export function unitHeight(unit: BlockUnit): number | null {
  return (
    toSafeInt(nativeHeader(unit.native)?.number) ??
    toSafeInt(unit.evm?.number) ??
    toSafeInt(unit.bareTxs?.[0]?.blockNumber)
  );
}

function blockRef(unit: BlockUnit): BlockRef {
  const header = nativeHeader(unit.native);
  const firstTx = unit.bareTxs?.[0];
  return {
    height: unitHeight(unit),
    hash: normalizeHash(unit.native?.blockID) ?? normalizeHash(unit.evm?.hash) ?? null,
    parent_hash: normalizeHash(header?.parentHash) ?? normalizeHash(unit.evm?.parentHash) ?? null,
    time:
      msToSeconds(header?.timestamp) ??
      evmTimeSeconds(unit.evm?.timestamp) ??
      msToSeconds(firstTx?.block_timestamp),
  };
}

function indexBy(list: JsonObject[], key: string): Map<string, JsonObject> {
  const map = new Map<string, JsonObject>();
  for (const o of list) {
    const h = normalizeHash(o[key]);
    if (h && !map.has(h)) map.set(h, o);
  }
  return map;
}

/** Parses one block unit; a transaction that fails becomes an issue, the rest still parse. */
export function parseBlockUnit(unit: BlockUnit, ctx: ChainContext): { block: ParsedBlock; issues: ParseIssue[] } {
  const ref = blockRef(unit);
  const facts: BlockFacts = { height: ref.height, blockHash: ref.hash, time: ref.time };
  const infos = indexBy(unit.infos, 'id');
  const receipts = indexBy(unit.receipts, 'transactionHash');
  const evmTxs = indexBy(asArray(unit.evm?.transactions).filter((t): t is JsonObject => asObject(t) !== undefined), 'hash');
  const extras = (h: string): TxExtras => ({ info: infos.get(h), receipt: receipts.get(h), evmTx: evmTxs.get(h) });

  const issues: ParseIssue[] = [];
  const transactions: ParsedBlock['transactions'] = [];
  const run = (txs: unknown[], parseOne: (tx: unknown, i: number) => TxOutcome): void => {
    txs.forEach((tx, i) => {
      let outcome: TxOutcome;
      try {
        outcome = parseOne(tx, i);
      } catch (err) {
        outcome = { ok: false, txHash: null, reason: `transaction parse error: ${String(err)}` };
      }
      if (outcome.ok) transactions.push(outcome.record);
      else issues.push({ block_index: unit.blockIndex, tx_hash: outcome.txHash, tx_index: i, reason: outcome.reason });
    });
  };

  if (unit.native) {
    run(asArray(unit.native.transactions), (tx, i) => parseNativeTx(tx, i, facts, extras, ctx));
  } else if (unit.evm) {
    run(asArray(unit.evm.transactions), (tx, i) => parseEvmViewTx(tx, i, facts, (h) => receipts.get(h), ctx));
  } else if (unit.bareTxs) {
    run(unit.bareTxs, (tx) => {
      // List items carry their own block number/time; their position in a block is unknown.
      const o = asObject(tx);
      const own: BlockFacts = {
        height: toSafeInt(o?.blockNumber) ?? facts.height,
        blockHash: null,
        time: msToSeconds(o?.block_timestamp) ?? facts.time,
      };
      return parseNativeTx(tx, null, own, extras, ctx);
    });
  }
  return { block: { block: ref, transactions }, issues };
}
