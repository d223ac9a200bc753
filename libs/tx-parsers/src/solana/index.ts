import { parseChainType } from '@chainpipe/chains';
import type { ChainContext, NormalizedTx, ParseIssue, ParseResult, ParsedBlock } from '../types';
import { type JsonObject, asArray, asNonEmptyString, asObject, errorMessage, toSafeInt } from './json';
import { type PayloadEntry, flattenPayload, resolveBlockSlots } from './payload';
import { type RecordContext, type TxPlacement, buildRecord } from './record';

/**
 * Solana (SVM) parser: streamer `data` elements → normalized records.
 *
 * Accepted elements: getBlock results and getTransaction results, bare or in JSON-RPC envelopes,
 * possibly grouped in a JSON-RPC batch array; `json` and `jsonParsed` encodings, and the binary
 * `base64` / `base58` ones (and the deprecated `binary`), whose wire bytes are decoded to the
 * `json` shape first (`wire.ts`). Decisions, in one place:
 * - height = slot (see `resolveBlockSlots` for how a getBlock's slot is found); block_hash =
 *   `blockhash` (null for getTransaction, which does not carry it); tx_time = `blockTime`;
 *   tx_hash = first signature; fee_payer = first account key; tx_fee = `meta.fee` lamports;
 *   tx_version = null for legacy (or absent) versions, the number for v0…; gas_used = compute
 *   units consumed (other gas fields null); tx_index = position in the block, or the
 *   getTransaction `transactionIndex` when the node gives it.
 * - Vote-only transactions produce no record and no issue. Block rewards produce no record.
 * - sender / receiver / amount: the main SOL movement (see `summarizeNativeMoves`, and
 *   `nativeFromBalanceDeltas` when no System instruction moved lamports); without one, sender =
 *   fee payer, receiver = the first invoked program (ComputeBudget and advanceNonce skipped),
 *   amount "0". symbol / decimals are always the native coin's.
 * - transfer_type: `token` when token_transfers is non-empty, else `native` when SOL moved, else
 *   `contract_call`.
 * - Failed transactions: record kept with tx_status `failed` and the fee; token_transfers empty,
 *   amount "0", transfer_type `contract_call`, sender = fee payer. Their internal_transactions
 *   still list what the instructions asked for, each entry marked `failed`.
 * - internal_transactions: every instruction in execution order — top-level ones (depth 1) and
 *   inner ones (depth = stackHeight, else 2) — with instr_index = the top-level index, the
 *   instruction name when known, from/to/amount for SOL movements (lamports) and token movements
 *   (token accounts, raw token units; description names the mint), the memo text as description.
 * - token_transfers: SPL Token / Token-2022 transfer, transferChecked, transferCheckedWithFee,
 *   mintTo(Checked), burn(Checked), top-level and inner, standard `spl`; derived from token
 *   balances only when no such instruction could be read (see `tokenTransfersFromBalances`).
 */
export function parseSolanaPayload(items: unknown[], ctx: ChainContext): ParseResult {
  const blocks: ParsedBlock[] = [];
  const issues: ParseIssue[] = [];
  try {
    const rc = recordContext(ctx);
    const entries = flattenPayload(items);
    const slots = resolveBlockSlots(entries, batchStart(ctx));
    const txGroups = new Map<string, ParsedBlock>();
    for (const entry of entries) {
      try {
        parseEntry(entry, slots, rc, blocks, issues, txGroups);
      } catch (e) {
        issues.push({ block_index: entry.index, tx_hash: null, tx_index: null, reason: `block: ${errorMessage(e)}` });
      }
    }
  } catch (e) {
    issues.push({ block_index: 0, tx_hash: null, tx_index: null, reason: `payload: ${errorMessage(e)}` });
  }
  return { blocks, issues };
}

function recordContext(ctx: ChainContext): RecordContext {
  const c = asObject(ctx) ?? {};
  const symbol = asNonEmptyString(c.nativeSymbol);
  const decimals = toSafeInt(c.nativeDecimals);
  return {
    chainType: parseChainType(c.chainType) ?? 'solana',
    chainId: toSafeInt(c.chainId) ?? 1,
    nativeSymbol: symbol ?? 'SOL',
    nativeDecimals: decimals !== null && decimals >= 0 ? decimals : 9,
  };
}

function batchStart(ctx: ChainContext): number | null {
  const n = toSafeInt(asObject(ctx)?.batchStartRange);
  return n !== null && n >= 0 ? n : null;
}

function parseEntry(
  entry: PayloadEntry,
  slots: Map<number, number | null>,
  rc: RecordContext,
  blocks: ParsedBlock[],
  issues: ParseIssue[],
  txGroups: Map<string, ParsedBlock>,
): void {
  switch (entry.kind) {
    case 'empty':
      return;
    case 'invalid':
      issues.push({ block_index: entry.index, tx_hash: null, tx_index: null, reason: entry.reason });
      return;
    case 'block':
      blocks.push(parseBlock(entry.index, entry.block, slots.get(entry.index) ?? null, rc, issues));
      return;
    case 'transaction': {
      const tx = entry.tx;
      const slot = toSafeInt(tx.slot);
      const time = toSafeInt(tx.blockTime);
      // Transactions of one slot share one block entry (one idempotency / reorg unit).
      const key = String(slot);
      let group = txGroups.get(key);
      if (!group) {
        group = { block: { height: slot, hash: null, parent_hash: null, time }, transactions: [] };
        txGroups.set(key, group);
        blocks.push(group);
      }
      const index = toSafeInt(tx.transactionIndex);
      const place: TxPlacement = { slot, blockHash: null, blockTime: time, txIndex: index !== null && index >= 0 ? index : null };
      addTransaction(entry.index, tx, index, place, rc, group.transactions, issues);
      return;
    }
  }
}

function parseBlock(
  blockIndex: number,
  block: JsonObject,
  slot: number | null,
  rc: RecordContext,
  issues: ParseIssue[],
): ParsedBlock {
  const hash = asNonEmptyString(block.blockhash);
  const time = toSafeInt(block.blockTime);
  const parsed: ParsedBlock = {
    block: { height: slot, hash, parent_hash: asNonEmptyString(block.previousBlockhash), time },
    transactions: [],
  };
  if (!Array.isArray(block.transactions)) {
    const reason = Array.isArray(block.signatures)
      ? 'block has signatures only (transactionDetails != full)'
      : 'block has no transactions array';
    issues.push({ block_index: blockIndex, tx_hash: null, tx_index: null, reason });
    return parsed;
  }
  block.transactions.forEach((raw, i) => {
    const place: TxPlacement = { slot, blockHash: hash, blockTime: time, txIndex: i };
    addTransaction(blockIndex, raw, i, place, rc, parsed.transactions, issues);
  });
  return parsed;
}

function addTransaction(
  blockIndex: number,
  raw: unknown,
  txIndex: number | null,
  place: TxPlacement,
  rc: RecordContext,
  out: NormalizedTx[],
  issues: ParseIssue[],
): void {
  let hash: string | null = null;
  try {
    hash = asNonEmptyString(asArray(asObject(asObject(raw)?.transaction)?.signatures)[0]);
    const outcome = buildRecord(raw, place, rc);
    if (outcome.kind === 'record') out.push(outcome.record);
    else if (outcome.kind === 'error') {
      issues.push({ block_index: blockIndex, tx_hash: hash, tx_index: txIndex, reason: outcome.reason });
    }
  } catch (e) {
    issues.push({ block_index: blockIndex, tx_hash: hash, tx_index: txIndex, reason: `transaction: ${errorMessage(e)}` });
  }
}
