import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Root of the real chain fixtures (see test/fixtures/chain/SOURCES.md for provenance). */
export const CHAIN_FIXTURES_DIR = path.resolve(__dirname, '../../../test/fixtures/chain');

/** Reads a fixture as bytes, exactly as stored. */
export function readFixtureBytes(relativePath: string): Buffer {
  return readFileSync(path.join(CHAIN_FIXTURES_DIR, relativePath));
}

/** Reads and parses a JSON fixture. */
export function readFixtureJson<T = any>(relativePath: string): T {
  return JSON.parse(readFixtureBytes(relativePath).toString('utf8')) as T;
}
