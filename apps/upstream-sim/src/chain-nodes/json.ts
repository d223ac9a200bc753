export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const ENVELOPE_KEYS = new Set(['jsonrpc', 'id', 'result']);

function isResultEnvelope(v: unknown): v is { result: unknown } {
  return isObject(v) && 'result' in v && Object.keys(v).every((k) => ENVELOPE_KEYS.has(k));
}

/**
 * Fixtures are stored either as the bare `result` or as the whole JSON-RPC answer (some as a
 * one-element batch, one as `{result}` alone); this gives the `result` in every case.
 */
export function unwrapRpcResult(v: unknown): unknown {
  let cur = v;
  if (Array.isArray(cur) && cur.length === 1 && isResultEnvelope(cur[0])) cur = cur[0];
  return isResultEnvelope(cur) ? cur.result : cur;
}

/** `0x…` quantity (or a plain non-negative integer) → number; null when not a safe integer. */
export function quantityToInt(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : null;
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(v)) return null;
  const n = Number.parseInt(v.slice(2), 16);
  return Number.isSafeInteger(n) ? n : null;
}

export function toQuantity(n: number | bigint): string {
  return `0x${n.toString(16)}`;
}

/** The block/slot number a fixture file name carries: `eth-mainnet-17053184.…`, `…-slot100000000.…`. */
export function numberInFileName(fileName: string): number | null {
  const m = /-(?:slot|blockheight)?(\d+)\./.exec(fileName);
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : null;
}

/** The method part of a fixture file name: `eth-mainnet-17053184.receipts.json` → `receipts`. */
export function kindInFileName(fileName: string): string {
  const base = fileName.replace(/\.json$/, '');
  const dot = base.indexOf('.');
  return dot < 0 ? '' : base.slice(dot + 1);
}

export function baseName(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}
