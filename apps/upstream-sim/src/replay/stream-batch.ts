import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** A block a reorg displaced, as the streamer lists it in `reorgs`. */
export interface DisplacedBlock {
  number: number;
  hash: string;
  /** The displaced block's timestamp (seconds). */
  timestamp: number;
}

/** One streamer batch: consecutive blocks of one network and dataset. */
export interface StreamBatch {
  network: string;
  dataset: string;
  /** The `data` elements, one per block. */
  items: unknown[];
  startRange: number;
  endRange: number;
  /** Where it came from, for the replay log. */
  label: string;
  /** A re-delivery after a reorg: the blocks the batch's blocks replace (`blocks_reorged`, `reorgs`). */
  displaced?: DisplacedBlock[];
}

export interface WrapOptions {
  secret: string;
  streamId: string;
  streamName?: string;
  gzip?: boolean;
  /** QuickNode's X-QN-* authenticity headers, when a security token is given. */
  signing?: { token: string; nonce: string; timestampSec: number };
}

export interface StreamDelivery {
  /** What goes on the wire (gzipped when asked). */
  body: Buffer;
  /** The uncompressed JSON of `{data, metadata}`. */
  json: string;
  headers: Record<string, string>;
}

/**
 * The `metadata` object QuickNode Streams sends with every batch (see the streamer-formats
 * guide): the batch range, the raw data size, reorg fields (`null` in the body when empty; after a
 * reorg the heights re-delivered and each displaced block's number, hash and timestamp), the
 * dataset and network, and the stream's own settings (`end_range` -1 = continuous).
 */
export function streamMetadata(batch: StreamBatch, dataSizeBytes: number, opts: Pick<WrapOptions, 'streamId' | 'streamName'>): Record<string, unknown> {
  return {
    batch_start_range: batch.startRange,
    batch_end_range: batch.endRange,
    blocks_reorged: batch.displaced?.length ? batch.displaced.map((d) => d.number) : null,
    data_size_bytes: dataSizeBytes,
    dataset: batch.dataset,
    end_range: -1,
    keep_distance_from_tip: 0,
    network: batch.network,
    reorgs: batch.displaced?.length ? batch.displaced.map((d) => ({ number: d.number, hash: d.hash, timestamp: d.timestamp })) : null,
    start_range: batch.startRange,
    stream_id: opts.streamId,
    stream_name: opts.streamName ?? 'chainpipe-replay',
    stream_region: 'local',
  };
}

/** QuickNode's signature: HMAC-SHA256 over nonce + timestamp + the uncompressed payload, hex. */
export function qnSignature(token: string, nonce: string, timestamp: string, payload: string): string {
  return createHmac('sha256', token).update(nonce + timestamp + payload, 'utf8').digest('hex');
}

/**
 * Wraps a batch the way the streamer delivers it: `{data, metadata}` as the body, the same
 * metadata as Batch-* / Stream-* headers, and what chain-ingest needs to accept it
 * (`cl-stream-network`, `Content-Secret-X`). Pure.
 */
export function wrapStreamBatch(batch: StreamBatch, opts: WrapOptions): StreamDelivery {
  const dataJson = JSON.stringify(batch.items);
  const dataSizeBytes = Buffer.byteLength(dataJson, 'utf8');
  const metadata = streamMetadata(batch, dataSizeBytes, opts);
  const json = `{"data":${dataJson},"metadata":${JSON.stringify(metadata)}}`;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Secret-X': opts.secret,
    'cl-stream-network': batch.network,
    'Batch-Start-Range': String(batch.startRange),
    'Batch-End-Range': String(batch.endRange),
    'Batch-Data-Size-Bytes': String(dataSizeBytes),
    'Batch-Blocks-Reorged': JSON.stringify(metadata.blocks_reorged ?? []),
    'Batch-Reorgs': JSON.stringify(metadata.reorgs ?? []),
    'Stream-Dataset': batch.dataset,
    'Stream-Network': batch.network,
    'Stream-Id': opts.streamId,
    'Stream-Start-Range': String(batch.startRange),
    'Stream-End-Range': '-1',
    'Stream-Keep-Distance-From-Tip': '0',
  };
  if (opts.signing) {
    const timestamp = String(opts.signing.timestampSec);
    headers['X-QN-Nonce'] = opts.signing.nonce;
    headers['X-QN-Timestamp'] = timestamp;
    headers['X-QN-Signature'] = qnSignature(opts.signing.token, opts.signing.nonce, timestamp, json);
  }
  let body = Buffer.from(json, 'utf8');
  if (opts.gzip) {
    body = gzipSync(body);
    headers['Content-Encoding'] = 'gzip';
  }
  return { body, json, headers };
}
