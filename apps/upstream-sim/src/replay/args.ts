import { networkByName } from '@chainpipe/chains';
import { publicPort } from '@chainpipe/runtime';
import type { ReplayOptions } from './replay';

const DEFAULT_TARGET = `http://127.0.0.1:${publicPort('chain-ingest')}/stream`;

export const REPLAY_USAGE = `usage: npm run replay -- [options]

Posts fixture blocks to chain-ingest wrapped the way the streamer delivers them.

  --target URL      chain-ingest stream URL (default ${DEFAULT_TARGET})
  --secret S        Content-Secret-X (default: env STREAM_SECRET, else .run/dev.env)
  --network N       with --all: only N's blocks; with --file: post the files as network N
  --file PATH       a fixture (or a {data, metadata} delivery) to post; repeatable
  --all             the default set (EVM blocks with receipts, Solana, Tron, Bitcoin);
                    also what runs when no --file is given
  --dataset D       dataset name for --file posts (default: guessed from the content)
  --gzip            send gzip bodies (Content-Encoding: gzip)
  --qn-token T      add X-QN-Nonce/-Timestamp/-Signature signed with T
  --timeout-ms N    per-post timeout (default 30000)
  -h, --help        this text`;

export type ParsedReplayArgs = { kind: 'run'; options: Omit<ReplayOptions, 'onResult'> } | { kind: 'help' } | { kind: 'error'; message: string };

const VALUE_FLAGS = new Set(['--target', '--secret', '--network', '--file', '--dataset', '--qn-token', '--timeout-ms']);
const BOOL_FLAGS = new Set(['--all', '--gzip']);

/** Reads the replay command line; env gives what flags leave out. Pure. */
export function parseReplayArgs(argv: readonly string[], env: { STREAM_SECRET: string; FIXTURES_DIR: string }): ParsedReplayArgs {
  const values = new Map<string, string>();
  const files: string[] = [];
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { kind: 'help' };
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (BOOL_FLAGS.has(name)) {
      if (eq > 0) return { kind: 'error', message: `${name} takes no value` };
      flags.add(name);
      continue;
    }
    if (!VALUE_FLAGS.has(name)) return { kind: 'error', message: `unknown argument ${JSON.stringify(arg)}` };
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') return { kind: 'error', message: `${name} needs a value` };
    if (name === '--file') files.push(value);
    else values.set(name, value);
  }

  const target = values.get('--target') ?? DEFAULT_TARGET;
  try {
    const u = new URL(target);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
  } catch {
    return { kind: 'error', message: `--target must be an http(s) URL, got ${JSON.stringify(target)}` };
  }
  const secret = values.get('--secret') ?? env.STREAM_SECRET;
  if (!secret) return { kind: 'error', message: 'no stream secret: pass --secret or set STREAM_SECRET' };
  const network = values.get('--network');
  if (network !== undefined && !networkByName(network)) return { kind: 'error', message: `unknown network ${JSON.stringify(network)}` };
  const timeoutRaw = values.get('--timeout-ms');
  const timeoutMs = timeoutRaw === undefined ? undefined : Number(timeoutRaw);
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)) return { kind: 'error', message: `--timeout-ms must be a positive integer, got ${JSON.stringify(timeoutRaw)}` };

  return {
    kind: 'run',
    options: {
      target,
      secret,
      network: network === undefined ? undefined : networkByName(network)!.network,
      files,
      all: flags.has('--all'),
      gzip: flags.has('--gzip'),
      dataset: values.get('--dataset'),
      signingToken: values.get('--qn-token'),
      timeoutMs,
      fixturesDir: env.FIXTURES_DIR,
    },
  };
}
