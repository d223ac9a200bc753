import { asObject, asString, isObject, toSafeInt, type JsonObject } from './json';

/**
 * What one delivered element turns out to be. A streamer element may be a node block, a
 * composite `{block, receipts, native_block}`, an eth-view block, a JSON-RPC envelope or batch
 * of any of these, a bare transaction (TronGrid list item) or a transaction info / receipt that
 * belongs to a block delivered alongside.
 */
export type PayloadItem =
  | { kind: 'block'; native: JsonObject | null; evm: JsonObject | null; infos: JsonObject[]; receipts: JsonObject[] }
  | { kind: 'tx'; tx: JsonObject }
  | { kind: 'execution'; height: number | null; info: JsonObject | null; receipt: JsonObject | null }
  | { kind: 'invalid'; reason: string };

/** Nesting allowed for batches of envelopes of lists; deeper input is rejected, not recursed. */
const MAX_DEPTH = 4;

/** Keys under which a composite item carries execution results. */
const EXECUTION_KEYS = ['receipts', 'transaction_infos', 'transactionInfos', 'infos', 'transaction_info'];

function isNativeBlock(o: JsonObject): boolean {
  return typeof o.blockID === 'string' || isObject(o.block_header);
}

function isEvmBlock(o: JsonObject): boolean {
  return (
    !isNativeBlock(o) &&
    typeof o.number === 'string' &&
    (typeof o.hash === 'string' || Array.isArray(o.transactions))
  );
}

function isBareTx(o: JsonObject): boolean {
  return o.txID !== undefined && o.raw_data !== undefined;
}

function isEvmReceipt(o: JsonObject): boolean {
  return typeof o.transactionHash === 'string';
}

function isTxInfo(o: JsonObject): boolean {
  return (
    typeof o.id === 'string' &&
    ['blockNumber', 'receipt', 'contractResult', 'fee', 'log', 'blockTimeStamp'].some((k) => k in o)
  );
}

function isEnvelope(o: JsonObject): boolean {
  return typeof o.jsonrpc === 'string' || ('id' in o && ('result' in o || 'error' in o) && !isTxInfo(o));
}

/** Execution results of a composite item, split by kind; arrays of arrays (per-block receipt lists) are flattened. */
function collectExecution(o: JsonObject): { infos: JsonObject[]; receipts: JsonObject[] } {
  const infos: JsonObject[] = [];
  const receipts: JsonObject[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(v)) {
      for (const el of v) visit(el, depth + 1);
      return;
    }
    const obj = asObject(v);
    if (!obj) return;
    if (isEnvelope(obj)) return visit(obj.result, depth + 1);
    if (isEvmReceipt(obj)) receipts.push(obj);
    else if (isTxInfo(obj)) infos.push(obj);
  };
  for (const key of EXECUTION_KEYS) visit(o[key], 0);
  return { infos, receipts };
}

function unwrap(v: unknown): unknown {
  const o = asObject(v);
  return o && isEnvelope(o) ? o.result : v;
}

function classifyObject(o: JsonObject, depth: number): PayloadItem[] {
  if (isEnvelope(o)) {
    const error = asObject(o.error);
    if (error) return [{ kind: 'invalid', reason: `JSON-RPC error: ${asString(error.message) ?? 'no message'}` }];
    return expandItem(o.result, depth + 1);
  }
  if (isNativeBlock(o)) return [{ kind: 'block', native: o, evm: null, infos: [], receipts: [] }];
  if (isEvmBlock(o)) return [{ kind: 'block', native: null, evm: o, infos: [], receipts: [] }];
  if ('native_block' in o || isObject(unwrap(o.block))) {
    const nativeBlock = asObject(unwrap(o.native_block));
    const block = asObject(unwrap(o.block));
    const native = nativeBlock && isNativeBlock(nativeBlock) ? nativeBlock : block && isNativeBlock(block) ? block : null;
    const evm = block && isEvmBlock(block) ? block : null;
    if (!native && !evm) return [{ kind: 'invalid', reason: 'composite item has no recognisable block' }];
    return [{ kind: 'block', native, evm, ...collectExecution(o) }];
  }
  if (isBareTx(o)) return [{ kind: 'tx', tx: o }];
  if (isEvmReceipt(o)) return [{ kind: 'execution', height: toSafeInt(o.blockNumber), info: null, receipt: o }];
  if (isTxInfo(o)) return [{ kind: 'execution', height: toSafeInt(o.blockNumber), info: o, receipt: null }];
  // TronGrid list responses: `{success, meta, data: [tx…]}`.
  if (Array.isArray(o.data)) return expandItem(o.data, depth + 1);
  return [{ kind: 'invalid', reason: 'unrecognised item shape' }];
}

/** Classifies one delivered element, flattening envelopes and arrays. Never throws. */
export function expandItem(raw: unknown, depth = 0): PayloadItem[] {
  if (depth > MAX_DEPTH) return [{ kind: 'invalid', reason: 'item nested too deeply' }];
  if (Array.isArray(raw)) return raw.flatMap((el) => expandItem(el, depth + 1));
  const o = asObject(raw);
  if (!o) return [{ kind: 'invalid', reason: raw === null || raw === undefined ? 'empty item' : 'item is not an object' }];
  return classifyObject(o, depth);
}

