import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_FIXTURES_DIR } from '../config';
import { DEFAULT_REPLAY_SET, batchFromDefault, batchFromFile } from './fixture-batches';
import { wrapStreamBatch, type StreamBatch } from './stream-batch';

export interface ReplayOptions {
  /** chain-ingest's POST /stream URL. */
  target: string;
  /** Content-Secret-X. */
  secret: string;
  /** Only this network of the default set; with files, the network they are posted as. */
  network?: string;
  /** Fixture files (absolute, relative to the cwd, or relative to the fixtures folder). */
  files?: string[];
  /** Replay the default set; also what happens when no file is given. */
  all?: boolean;
  gzip?: boolean;
  /** Dataset name for files (default: guessed from the content). */
  dataset?: string;
  fixturesDir?: string;
  /** A QuickNode security token: adds X-QN-Nonce / -Timestamp / -Signature. */
  signingToken?: string;
  streamId?: string;
  timeoutMs?: number;
  /** Called after each post, in order (the CLI prints a line). */
  onResult?: (result: ReplayResult) => void;
}

export interface ReplayResult {
  label: string;
  network: string;
  dataset: string;
  startRange: number;
  endRange: number;
  /** Bytes sent (after gzip). */
  bytes: number;
  /** HTTP status, or null when no answer came. */
  status: number | null;
  ok: boolean;
  error?: string;
}

function resolveFile(file: string, fixturesDir: string): string {
  if (path.isAbsolute(file)) return file;
  if (existsSync(file)) return path.resolve(file);
  return path.join(fixturesDir, file);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** The batches a replay posts, in order; throws before anything is sent when one cannot be built. */
export function planReplay(opts: Pick<ReplayOptions, 'network' | 'files' | 'all' | 'dataset' | 'fixturesDir'>): StreamBatch[] {
  const dir = opts.fixturesDir ?? DEFAULT_FIXTURES_DIR;
  const files = opts.files ?? [];
  const batches: StreamBatch[] = [];
  if (opts.all || files.length === 0) {
    const set = DEFAULT_REPLAY_SET.filter((e) => !opts.network || e.network === opts.network);
    if (set.length === 0) throw new Error(`the default set has nothing for network ${opts.network}`);
    batches.push(...set.map((e) => batchFromDefault(e, (rel) => readJson(path.join(dir, rel)))));
  }
  for (const file of files) {
    const abs = resolveFile(file, dir);
    batches.push(batchFromFile(abs, readJson(abs), { network: opts.network, dataset: opts.dataset }));
  }
  return batches;
}

/**
 * Posts fixture blocks to chain-ingest the way the streamer does, one batch after the other
 * (a streamer waits for each delivery before the next). Resolves with one result per post;
 * a post that fails is reported, not thrown.
 */
export async function replayFixtures(opts: ReplayOptions): Promise<ReplayResult[]> {
  const batches = planReplay(opts);
  const streamId = opts.streamId ?? randomUUID();
  const results: ReplayResult[] = [];
  for (const batch of batches) {
    const delivery = wrapStreamBatch(batch, {
      secret: opts.secret,
      streamId,
      gzip: opts.gzip,
      signing: opts.signingToken ? { token: opts.signingToken, nonce: randomBytes(16).toString('hex'), timestampSec: Math.floor(Date.now() / 1000) } : undefined,
    });
    const base = { label: batch.label, network: batch.network, dataset: batch.dataset, startRange: batch.startRange, endRange: batch.endRange, bytes: delivery.body.length };
    let result: ReplayResult;
    try {
      const res = await fetch(opts.target, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000) });
      const text = await res.text();
      result = { ...base, status: res.status, ok: res.ok, ...(res.ok ? {} : { error: text.slice(0, 300) }) };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message;
      result = { ...base, status: null, ok: false, error: `${(err as Error).message}${detail ? ` (${detail})` : ''}` };
    }
    results.push(result);
    opts.onResult?.(result);
  }
  return results;
}
