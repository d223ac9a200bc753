import type { IHeaders } from 'kafkajs';

/** The offset to commit after processing `offset`: Kafka commits the next offset to read. */
export function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}

/** Splits a list into consecutive parts of at most `size` items (order kept). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (size < 1) throw new RangeError('chunk size must be >= 1');
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** kafkajs gives header values as Buffers (or arrays of them); our headers are strings. */
export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    const first = Array.isArray(v) ? v[v.length - 1] : v;
    out[k] = Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
  }
  return out;
}
