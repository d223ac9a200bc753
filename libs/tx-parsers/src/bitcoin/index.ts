import type { BlockRef, ChainContext, NormalizedTx, ParseIssue, ParseResult, TxStatus } from '../types';
import { blockbookBlockRef, blockbookTxBlockRef, looksLikeBlockbookTx, readBlockbookTx } from './blockbook';
import { coreBlockRef, coreTxBlockRef, readCoreTx } from './core';
import { errorText, field, hash32, isObj, nonNegInt, type Obj } from './json';
import type { ReadResult } from './model';
import { decodeRaw, looksLikeRawHex } from './raw';
import { buildRecord } from './record';

/**
 * Parses the `data` elements of a Bitcoin streamer delivery (one element per block) into
 * normalized records. Accepted per element, optionally inside a JSON-RPC envelope:
 * - a Blockbook `bb_getBlock` block (`txs[]`, satoshi strings) — what the streamer sends;
 * - a Bitcoin Core `getblock` verbosity 2 or 3 block (`tx[]`, BTC numbers);
 * - a single transaction (Core verbose `getrawtransaction`, or Blockbook `bb_getTx`), which
 *   becomes a block of its own built from `blockhash`/`blocktime`;
 * - raw hex (Core `getblock <hash> 0`, non-verbose `getrawtransaction`), decoded with
 *   bitcoinjs-lib (see raw.ts): input addresses and values unknown, so the fee is left null.
 * Never throws: a bad transaction becomes a ParseIssue and the rest of its block still parses.
 */
export function parseBitcoinPayload(items: unknown[], ctx: ChainContext): ParseResult {
  const result: ParseResult = { blocks: [], issues: [] };
  if (!Array.isArray(items)) {
    result.issues.push(issue(0, null, null, 'payload is not an array of blocks'));
    return result;
  }
  let meta: ChainContext;
  try {
    meta = safeContext(ctx);
  } catch (e) {
    result.issues.push(issue(0, null, null, `invalid chain context: ${errorText(e)}`));
    return result;
  }
  for (let i = 0; i < items.length; i++) {
    try {
      parseItem(items[i], i, meta, result);
    } catch (e) {
      result.issues.push(issue(i, null, null, `block could not be parsed: ${errorText(e)}`));
    }
  }
  return result;
}

function safeContext(ctx: ChainContext): ChainContext {
  return {
    ...ctx,
    nativeSymbol: typeof ctx.nativeSymbol === 'string' ? ctx.nativeSymbol : 'BTC',
    nativeDecimals: nonNegInt(ctx.nativeDecimals) ?? 8,
  };
}

function issue(blockIndex: number, txHash: string | null, txIndex: number | null, reason: string): ParseIssue {
  return { block_index: blockIndex, tx_hash: txHash, tx_index: txIndex, reason };
}

/** JSON-RPC envelopes are unwrapped once; an `error` member or a null result drops the item. */
function unwrap(item: unknown): { value: unknown } | { reason: string } {
  if (!isObj(item) || !('jsonrpc' in item || ('id' in item && ('result' in item || 'error' in item)))) {
    return { value: item };
  }
  if (item.error !== undefined && item.error !== null) {
    const message = field(item.error, 'message');
    return { reason: `JSON-RPC error: ${typeof message === 'string' ? message : 'unknown'}` };
  }
  if (item.result === undefined || item.result === null) return { reason: 'JSON-RPC result is empty' };
  return { value: item.result };
}

function parseItem(item: unknown, blockIndex: number, ctx: ChainContext, out: ParseResult): void {
  const unwrapped = unwrap(item);
  if ('reason' in unwrapped) {
    out.issues.push(issue(blockIndex, null, null, unwrapped.reason));
    return;
  }
  const value = unwrapped.value;
  if (typeof value === 'string') {
    parseRawHex(value, blockIndex, ctx, out);
    return;
  }
  if (!isObj(value)) {
    out.issues.push(issue(blockIndex, null, null, 'block is not an object'));
    return;
  }
  if (Array.isArray(value.txs)) {
    parseBlock(value, value.txs, blockbookBlockRef(value), true, blockIndex, ctx, out);
  } else if (Array.isArray(value.tx)) {
    parseBlock(value, value.tx, coreBlockRef(value), false, blockIndex, ctx, out);
  } else if (Array.isArray(value.vin) || Array.isArray(value.vout)) {
    parseLoneTx(value, blockIndex, ctx, out);
  } else {
    out.issues.push(issue(blockIndex, null, null, 'not a Bitcoin block or transaction (no txs, tx or vin/vout)'));
  }
}

function parseBlock(
  block: Obj,
  txs: unknown[],
  ref: BlockRef,
  blockbook: boolean,
  blockIndex: number,
  ctx: ChainContext,
  out: ParseResult,
): void {
  const transactions: NormalizedTx[] = [];
  const issues: ParseIssue[] = [];
  const declared = nonNegInt(blockbook ? block.txCount : block.nTx);
  const totalPages = nonNegInt(block.totalPages);
  // A paged Blockbook block holds only part of its transactions; the rest are silently absent.
  if ((declared !== null && declared > txs.length) || (totalPages !== null && totalPages > 1)) {
    const page = nonNegInt(block.page);
    const pages = totalPages !== null && totalPages > 1 ? ` (page ${page ?? '?'} of ${totalPages})` : '';
    issues.push(issue(blockIndex, null, null, `block lists ${txs.length} of ${declared ?? '?'} transactions${pages}`));
  }
  for (let j = 0; j < txs.length; j++) {
    const raw = txs[j];
    try {
      const read = blockbook ? readBlockbookTx(raw, j) : readCoreTx(raw);
      if (!read.ok) {
        issues.push(issue(blockIndex, txHashOf(raw), j, read.reason));
        continue;
      }
      // Blockbook repeats the block on every transaction; it fills gaps in the block header.
      const own = blockbook && isObj(raw) ? blockbookTxBlockRef(raw) : null;
      transactions.push(
        buildRecord(
          read.tx,
          {
            height: ref.height ?? own?.height ?? null,
            blockHash: ref.hash ?? own?.hash ?? null,
            time: ref.time ?? own?.time ?? null,
            txIndex: j,
            status: 'success',
          },
          ctx,
        ),
      );
    } catch (e) {
      issues.push(issue(blockIndex, txHashOf(raw), j, `transaction could not be parsed: ${errorText(e)}`));
    }
  }
  out.blocks.push({ block: ref, transactions });
  out.issues.push(...issues);
}

function parseLoneTx(tx: Obj, blockIndex: number, ctx: ChainContext, out: ParseResult): void {
  const blockbook = looksLikeBlockbookTx(tx);
  const ref = blockbook ? blockbookTxBlockRef(tx) : coreTxBlockRef(tx);
  const read: ReadResult = blockbook ? readBlockbookTx(tx, null) : readCoreTx(tx);
  if (!read.ok) {
    out.issues.push(issue(blockIndex, txHashOf(tx), null, read.reason));
    return;
  }
  const status: TxStatus = ref.hash !== null || ref.height !== null ? 'success' : 'pending';
  const record = buildRecord(
    read.tx,
    { height: ref.height, blockHash: ref.hash, time: ref.time, txIndex: null, status },
    ctx,
  );
  out.blocks.push({ block: ref, transactions: [record] });
}

/**
 * Raw hex: a block's transactions get its hash, time and position, its height from BIP34 or
 * else the batch range; a lone raw transaction names no block, so it is pending like a mempool
 * transaction until a block delivers it.
 */
function parseRawHex(hex: string, blockIndex: number, ctx: ChainContext, out: ParseResult): void {
  if (!looksLikeRawHex(hex)) {
    out.issues.push(issue(blockIndex, null, null, 'string item is not raw Bitcoin hex'));
    return;
  }
  const decoded = decodeRaw(hex);
  if (decoded.kind === 'error') {
    out.issues.push(issue(blockIndex, null, null, decoded.reason));
    return;
  }
  if (decoded.kind === 'tx') {
    const record = buildRecord(decoded.tx, { height: null, blockHash: null, time: null, txIndex: null, status: 'pending' }, ctx);
    out.blocks.push({ block: { height: null, hash: null, parent_hash: null, time: null }, transactions: [record] });
    return;
  }
  const start = ctx.batchStartRange;
  const fallback = typeof start === 'number' && Number.isSafeInteger(start) && start >= 0 ? start + blockIndex : null;
  const ref: BlockRef = { ...decoded.ref, height: decoded.ref.height ?? fallback };
  const transactions = decoded.txs.map((tx, j) =>
    buildRecord(tx, { height: ref.height, blockHash: ref.hash, time: ref.time, txIndex: j, status: 'success' }, ctx),
  );
  out.blocks.push({ block: ref, transactions });
}

function txHashOf(raw: unknown): string | null {
  return typeof raw === 'string' ? hash32(raw) : hash32(field(raw, 'txid'));
}
