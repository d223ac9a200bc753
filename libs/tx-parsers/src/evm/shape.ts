import { hash32, isObject } from './hex';

type Json = any;

/** A callTracer result for one transaction; `txHash` only when the node sent it. */
export interface CallTrace {
  txHash: string | null;
  frame: Json | null;
  /** Position in the per-block trace array (transactions are traced in block order). */
  position: number;
}

/** One streamer element reduced to its parts; any of them may be missing. */
export interface BlockBundle {
  block: Json | null;
  /** Transaction entries in block order: full objects, or bare hashes from a hash-only block. */
  txs: unknown[];
  receipts: Json[] | null;
  callTraces: CallTrace[] | null;
  parityTraces: Json[] | null;
  /** Parts of the element that were present but unusable. */
  warnings: string[];
}

export type ShapeResult = { ok: true; bundle: BlockBundle } | { ok: false; reason: string };

const TRACE_KEYS = ['traces', 'trace', 'debug_traces', 'debug_trace', 'trace_block', 'trace_blocks'];

/** Unwraps `{jsonrpc, result}` envelopes (a one-element batch too); an error envelope is reported. */
export function unwrapEnvelope(v: unknown): { value: unknown; error: string | null } {
  let cur = v;
  for (let i = 0; i < 4; i++) {
    if (Array.isArray(cur) && cur.length === 1 && isEnvelope(cur[0])) {
      cur = cur[0];
      continue;
    }
    if (!isEnvelope(cur)) break;
    if ('result' in cur) {
      cur = cur.result;
      continue;
    }
    const err: Json = cur.error;
    const message = isObject(err) && typeof err.message === 'string' ? err.message : 'no result';
    return { value: null, error: `JSON-RPC error: ${message.slice(0, 200)}` };
  }
  return { value: cur, error: null };
}

/** JSON-RPC batch responses: each element is its own envelope (an error one becomes null). */
function unwrapElements(arr: unknown[]): unknown[] {
  if (!arr.some(isEnvelope)) return arr;
  return arr.map((e) => (isEnvelope(e) ? (unwrapEnvelope(e).value ?? null) : e));
}

function isEnvelope(v: unknown): v is Record<string, unknown> {
  return isObject(v) && 'jsonrpc' in v && ('result' in v || 'error' in v);
}

function isBlock(o: Json): boolean {
  return Array.isArray(o.transactions) || ('parentHash' in o && 'number' in o);
}

function isReceipt(o: Json): boolean {
  return 'transactionHash' in o && !('action' in o) && ('logs' in o || 'cumulativeGasUsed' in o || 'status' in o);
}

function isTransaction(o: Json): boolean {
  return 'hash' in o && 'from' in o && ('nonce' in o || 'input' in o) && !('transactions' in o);
}

function isParityTrace(o: Json): boolean {
  return 'action' in o && ('traceAddress' in o || 'subtraces' in o);
}

/** A callTracer frame: uppercase opcode type (`CALL`), unlike a transaction's hex `type`. */
function isCallFrame(o: Json): boolean {
  return typeof o.type === 'string' && /^[A-Z][A-Z0-9]*$/.test(o.type) && !('hash' in o);
}

function isCallTraceWrapper(o: Json): boolean {
  return ('result' in o && (isObject(o.result) || o.result === null)) || ('txHash' in o && !('transactionHash' in o));
}

function isComposite(o: Json): boolean {
  if (isBlock(o)) return false;
  return 'block' in o || 'receipts' in o || TRACE_KEYS.some((k) => k in o);
}

function emptyBundle(): BlockBundle {
  return { block: null, txs: [], receipts: null, callTraces: null, parityTraces: null, warnings: [] };
}

function firstObject(arr: unknown[]): Json | null {
  for (const e of arr) if (isObject(e)) return e;
  return null;
}

function toCallTraces(arr: unknown[]): CallTrace[] {
  return arr.map((e, position): CallTrace => {
    if (!isObject(e)) return { txHash: null, frame: null, position };
    const o: Json = e;
    if (isCallFrame(o)) return { txHash: hash32(o.txHash), frame: o, position };
    return { txHash: hash32(o.txHash ?? o.transactionHash), frame: isObject(o.result) ? o.result : null, position };
  });
}

function addBlock(bundle: BlockBundle, block: Json): void {
  bundle.block = block;
  if (Array.isArray(block.transactions)) bundle.txs = block.transactions;
}

/** Puts an array of traces (either tracer format) into the bundle; false when it is neither. */
function addTraces(bundle: BlockBundle, arr: unknown[]): boolean {
  const first = firstObject(arr);
  if (first === null) {
    bundle.callTraces = [];
    return true;
  }
  if (isParityTrace(first)) {
    bundle.parityTraces = arr;
    return true;
  }
  if (isCallFrame(first) || isCallTraceWrapper(first)) {
    bundle.callTraces = toCallTraces(arr);
    return true;
  }
  return false;
}

function fromArray(batch: unknown[]): ShapeResult {
  const arr = unwrapElements(batch);
  const bundle = emptyBundle();
  const first = firstObject(arr);
  if (first === null) return { ok: true, bundle };
  if (isReceipt(first)) {
    bundle.receipts = arr;
  } else if (isTransaction(first)) {
    bundle.txs = arr;
  } else if (!addTraces(bundle, arr)) {
    return { ok: false, reason: 'unrecognized EVM array element' };
  }
  return { ok: true, bundle };
}

function fromComposite(o: Json): ShapeResult {
  const bundle = emptyBundle();
  const problems: string[] = [];
  const block = unwrapEnvelope(o.block);
  if (block.error) problems.push(`block: ${block.error}`);
  else if (isObject(block.value) && isBlock(block.value)) addBlock(bundle, block.value);
  else if (block.value !== undefined && block.value !== null) problems.push('unrecognized block');

  const receipts = unwrapEnvelope(o.receipts);
  if (receipts.error) problems.push(`receipts: ${receipts.error}`);
  else if (Array.isArray(receipts.value)) bundle.receipts = unwrapElements(receipts.value);
  else if (isObject(receipts.value) && isReceipt(receipts.value)) bundle.receipts = [receipts.value];
  else if (receipts.value !== undefined && receipts.value !== null) problems.push('unrecognized receipts');

  const key = TRACE_KEYS.find((k) => k in o && o[k] !== null && o[k] !== undefined);
  if (key !== undefined) {
    const traces = unwrapEnvelope(o[key]);
    if (traces.error) problems.push(`${key}: ${traces.error}`);
    else if (!Array.isArray(traces.value) || !addTraces(bundle, unwrapElements(traces.value))) problems.push(`unrecognized ${key}`);
  }
  const nothingUsable = bundle.block === null && bundle.receipts === null && bundle.callTraces === null && bundle.parityTraces === null;
  if (nothingUsable) return { ok: false, reason: problems.length > 0 ? problems.join('; ') : 'empty block element' };
  // A broken part is reported but does not hide the parts that did parse.
  bundle.warnings.push(...problems);
  return { ok: true, bundle };
}

/**
 * Works out what a streamer element is from its shape (the dataset name is only a hint and may
 * be missing): a block, `{block, receipts, traces}`, a receipts array, a trace array (callTracer
 * or Parity), a single receipt, or a single transaction / transaction array.
 */
export function detectShape(item: unknown): ShapeResult {
  const { value, error } = unwrapEnvelope(item);
  if (error) return { ok: false, reason: error };
  if (Array.isArray(value)) return fromArray(value);
  if (!isObject(value)) return { ok: false, reason: `unexpected ${value === null ? 'null' : typeof value} element` };
  const o: Json = value;
  if (isComposite(o)) return fromComposite(o);
  const bundle = emptyBundle();
  if (isBlock(o)) addBlock(bundle, o);
  else if (isReceipt(o)) bundle.receipts = [o];
  else if (isTransaction(o)) bundle.txs = [o];
  else if (isCallTraceWrapper(o) || isCallFrame(o)) bundle.callTraces = toCallTraces([o]);
  else return { ok: false, reason: 'unrecognized EVM element' };
  return { ok: true, bundle };
}
