import path from 'node:path';
import { int, secret, str } from '@chainpipe/runtime';

/** The repository's chain fixtures (test/fixtures/chain), found from this file so any cwd works. */
export const DEFAULT_FIXTURES_DIR = path.resolve(__dirname, '../../../test/fixtures/chain');

const fixturesDir = str({ default: DEFAULT_FIXTURES_DIR, doc: 'folder of the chain fixtures (evm/, solana/, tron/, bitcoin/)' });

export const upstreamSimConfig = {
  HOST: str({ default: '127.0.0.1', doc: 'interface of the public port' }),
  PORT: int({ default: 8090, min: 0, max: 65535 }),
  OPS_PORT: int({ default: 9190, min: 0, max: 65535, doc: 'port of /metrics, /healthz, /readyz' }),
  FIXTURES_DIR: fixturesDir,
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024, doc: 'largest accepted request body' }),
  REQUEST_TIMEOUT_MS: int({ default: 15_000, min: 100 }),
  RPC_MAX_BATCH: int({ default: 1000, min: 1, max: 100_000, doc: 'largest JSON-RPC batch served (as geth)' }),
  SIM_FAULT_HOLD_MS: int({ default: 60_000, min: 100, max: 600_000, doc: 'how long `x-sim-fault: timeout` holds a request before closing the connection unanswered' }),
};

/** What the replayer reads from the environment (its flags win). */
export const replayConfig = {
  STREAM_SECRET: secret({ default: '', doc: 'Content-Secret-X for chain-ingest POST /stream (or --secret)' }),
  FIXTURES_DIR: fixturesDir,
};
