import { type JsonObject, asArray, asNonEmptyString, asObject, asString, isObject, toSafeInt } from './json';

/** One element of the delivery after unwrapping envelopes and flattening batches. */
export type PayloadEntry =
  | { kind: 'block'; index: number; block: JsonObject }
  | { kind: 'transaction'; index: number; tx: JsonObject }
  | { kind: 'empty'; index: number }
  | { kind: 'invalid'; index: number; reason: string };

const MAX_NESTING = 4;

function looksLikeBlock(o: JsonObject): boolean {
  return Array.isArray(o.transactions) || typeof o.blockhash === 'string' || 'parentSlot' in o;
}

function looksLikeTransaction(o: JsonObject): boolean {
  return 'transaction' in o && ('meta' in o || 'slot' in o);
}

function rpcError(o: JsonObject): string {
  const err = asObject(o.error);
  const message = asString(err?.message) ?? (typeof o.error === 'string' ? o.error : null);
  const code = toSafeInt(err?.code);
  return `JSON-RPC error${code !== null ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
}

/**
 * Streamer `data` elements → getBlock / getTransaction results. A JSON-RPC envelope
 * `{jsonrpc, id, result}` (or just `{result}`) is unwrapped; an array element (a JSON-RPC batch)
 * is flattened in order. null items and null results (skipped slot, unknown signature) are
 * `empty`: nothing to parse, no issue, but they keep their position, which the slot arithmetic
 * relies on.
 */
export function flattenPayload(items: unknown): PayloadEntry[] {
  const out: PayloadEntry[] = [];
  const visit = (item: unknown, depth: number) => {
    const index = out.length;
    if (item === null || item === undefined) {
      out.push({ kind: 'empty', index });
      return;
    }
    if (Array.isArray(item)) {
      if (depth >= MAX_NESTING) out.push({ kind: 'invalid', index, reason: 'arrays nested too deep' });
      else for (const el of item) visit(el, depth + 1);
      return;
    }
    if (!isObject(item)) {
      out.push({ kind: 'invalid', index, reason: `unexpected ${typeof item} item` });
      return;
    }
    if (!looksLikeBlock(item) && !looksLikeTransaction(item)) {
      if ('result' in item) {
        if (depth >= MAX_NESTING) out.push({ kind: 'invalid', index, reason: 'envelopes nested too deep' });
        else visit(item.result, depth + 1);
        return;
      }
      if ('error' in item) {
        out.push({ kind: 'invalid', index, reason: rpcError(item) });
        return;
      }
      out.push({ kind: 'invalid', index, reason: 'neither a getBlock nor a getTransaction result' });
      return;
    }
    if (looksLikeTransaction(item) && !Array.isArray(item.transactions)) out.push({ kind: 'transaction', index, tx: item });
    else out.push({ kind: 'block', index, block: item });
  };
  for (const item of asArray(items)) visit(item, 0);
  return out;
}

/**
 * A getBlock result has no slot of its own. In order of preference:
 * 1. an explicit numeric `slot` on the item (some pipelines add it);
 * 2. the next block of the payload when it is this block's child (its `previousBlockhash` is this
 *    `blockhash`): its `parentSlot` is exactly this slot — right even when the streamer leaves
 *    skipped slots out of the batch;
 * 3. `batchStartRange + position in the batch`, unless that contradicts `parentSlot` (a slot is
 *    always greater than its parent's);
 * 4. `parentSlot + 1`: a best estimate, wrong when the slots right after the parent were skipped;
 * 5. null.
 */
export function resolveBlockSlots(entries: readonly PayloadEntry[], batchStartRange: number | null): Map<number, number | null> {
  const blocks = entries.filter((e): e is Extract<PayloadEntry, { kind: 'block' }> => e.kind === 'block');
  const slots = new Map<number, number | null>();
  blocks.forEach((entry, i) => {
    const b = entry.block;
    const explicit = toSafeInt(b.slot);
    const parentSlot = toSafeInt(b.parentSlot);
    const next = blocks[i + 1];
    const hash = asNonEmptyString(b.blockhash);
    const nextParent = next ? toSafeInt(next.block.parentSlot) : null;
    const isParentOfNext =
      next !== undefined && hash !== null && asNonEmptyString(next.block.previousBlockhash) === hash && nextParent !== null;
    let slot: number | null = null;
    if (explicit !== null && explicit >= 0) slot = explicit;
    else if (isParentOfNext && (parentSlot === null || nextParent > parentSlot)) slot = nextParent;
    else if (batchStartRange !== null && (parentSlot === null || batchStartRange + entry.index > parentSlot)) {
      slot = batchStartRange + entry.index;
    } else if (parentSlot !== null) slot = parentSlot + 1;
    slots.set(entry.index, slot !== null && Number.isSafeInteger(slot) ? slot : null);
  });
  return slots;
}
