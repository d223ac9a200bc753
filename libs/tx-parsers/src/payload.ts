/**
 * What streamers post: `{ data: [...], metadata: {...} }`, a bare array of blocks, or one block.
 * Batch metadata may come in the body, in headers (carried by chain-ingest as Kafka headers), or
 * both; the body wins where both say something.
 */
export interface StreamMetadata {
  batchStartRange: number | null;
  batchEndRange: number | null;
  /** Block numbers the streamer re-sent because of a reorg. */
  blocksReorged: number[];
  dataset: string | null;
  network: string | null;
}

export type DecodedPayload = { ok: true; items: unknown[]; metadata: StreamMetadata } | { ok: false; reason: string };

function toInt(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) {
    const n = Number(v.trim());
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

function toIntList(v: unknown): number[] {
  let list: unknown = v;
  if (typeof v === 'string') {
    try {
      list = JSON.parse(v);
    } catch {
      list = v.split(',');
    }
  }
  if (!Array.isArray(list)) return [];
  const out: number[] = [];
  for (const x of list) {
    // The body form is a list of numbers; some producers send {number, hash} objects.
    const n = toInt(typeof x === 'object' && x !== null ? (x as { number?: unknown; block_number?: unknown }).number ?? (x as { block_number?: unknown }).block_number : x);
    if (n !== null) out.push(n);
  }
  return out;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v.trim() ? v.trim() : null;
}

export function readMetadata(body: Record<string, unknown> | null, headers: Record<string, string>): StreamMetadata {
  const b = body ?? {};
  const pick = (bodyKey: string, header: string) => (b[bodyKey] !== undefined && b[bodyKey] !== null ? b[bodyKey] : headers[header]);
  return {
    batchStartRange: toInt(pick('batch_start_range', 'batch-start-range')),
    batchEndRange: toInt(pick('batch_end_range', 'batch-end-range')),
    blocksReorged: [...new Set([...toIntList(b.blocks_reorged), ...toIntList(headers['batch-blocks-reorged'])])],
    dataset: str(pick('dataset', 'stream-dataset')),
    network: str(pick('network', 'stream-network')),
  };
}

/** Parses the raw body and unwraps the streamer envelope. Never throws. */
export function decodePayload(body: Buffer | string, headers: Record<string, string> = {}): DecodedPayload {
  let root: unknown;
  try {
    root = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch (err) {
    return { ok: false, reason: `body is not JSON: ${(err as Error).message.slice(0, 200)}` };
  }
  if (root === null || typeof root !== 'object') return { ok: false, reason: `body is a JSON ${root === null ? 'null' : typeof root}, not blocks` };
  if (Array.isArray(root)) return { ok: true, items: root, metadata: readMetadata(null, headers) };
  const obj = root as Record<string, unknown>;
  if ('data' in obj && ('metadata' in obj || Array.isArray(obj.data))) {
    const meta = obj.metadata && typeof obj.metadata === 'object' ? (obj.metadata as Record<string, unknown>) : null;
    const data = obj.data;
    const items = Array.isArray(data) ? data : data === null || data === undefined ? [] : [data];
    return { ok: true, items, metadata: readMetadata(meta, headers) };
  }
  return { ok: true, items: [obj], metadata: readMetadata(null, headers) };
}
