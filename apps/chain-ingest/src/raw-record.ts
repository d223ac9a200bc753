import type { IncomingHttpHeaders } from 'node:http';
import { networkByName, type NetworkInfo } from '@chainpipe/chains';

/**
 * Streamer metadata that travels as HTTP headers (Batch-Start-Range, Stream-Dataset…, and the
 * X-QN-* signature headers a parser may verify against). They are copied onto the Kafka record
 * under their lowercase names so the parser sees what the streamer said, even when the body
 * carries no `metadata` object.
 */
const CARRIED = /^(batch-|stream-|x-qn-)/;
const MAX_HEADER_VALUE = 8192;

/** The network from `cl-stream-network`, else `stream-network`; an error text when unusable. */
export function resolveNetwork(headers: IncomingHttpHeaders): { network: NetworkInfo } | { error: string } {
  const raw = first(headers['cl-stream-network']) ?? first(headers['stream-network']);
  if (raw === undefined || raw.trim() === '') return { error: 'missing network header (cl-stream-network or stream-network)' };
  const network = networkByName(raw);
  if (!network) return { error: `unknown network ${JSON.stringify(raw.slice(0, 64))}` };
  return { network };
}

export function carriedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CARRIED.test(name) || value === undefined) continue;
    out[name] = (Array.isArray(value) ? value.join(',') : value).slice(0, MAX_HEADER_VALUE);
  }
  return out;
}

export type IngestRoute = 'stream' | 'webhook';

export interface RawRecordInput {
  network: NetworkInfo;
  receivedAtMs: number;
  contentEncoding: string | undefined;
  contentType: string | undefined;
  route: IngestRoute;
  requestId: string;
  headers: IncomingHttpHeaders;
}

/** Kafka headers of a chain.raw.v1 record (schema: schemas/kafka/chain.raw.v1.headers.json). */
export function rawRecordHeaders(input: RawRecordInput): Record<string, string> {
  const encoding = (input.contentEncoding ?? 'identity').trim().toLowerCase() || 'identity';
  return {
    ...carriedHeaders(input.headers),
    network: input.network.network,
    received_at: String(input.receivedAtMs),
    content_encoding: encoding,
    content_type: (input.contentType ?? 'application/octet-stream').slice(0, 200),
    ingest_route: input.route,
    request_id: input.requestId.slice(0, 100),
  };
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
