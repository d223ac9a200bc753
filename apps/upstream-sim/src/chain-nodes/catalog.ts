import { baseName } from './json';

/** One parsed fixture file; `path` is relative to the fixtures folder, with forward slashes. */
export interface FixtureDoc {
  path: string;
  json: unknown;
}

export interface FixtureSource {
  /** Folder under the fixtures root. */
  dir: string;
  /** File name prefix of the chain in that folder. */
  prefix: string;
  /** The network (NETWORKS name) the files are served as. */
  network: string;
  note?: string;
}

/**
 * Which fixture files back which network (see test/fixtures/chain/SOURCES.md for where each file
 * comes from). There is no Base mainnet fixture, so base-mainnet serves the Base Goerli block:
 * the same OP-stack shapes, but its transactions carry Goerli's chain id.
 */
export const FIXTURE_SOURCES: readonly FixtureSource[] = [
  { dir: 'evm', prefix: 'eth-mainnet-', network: 'ethereum-mainnet' },
  { dir: 'evm', prefix: 'bsc-testnet-', network: 'bsc-testnet' },
  { dir: 'evm', prefix: 'arbitrum-one-', network: 'arbitrum-mainnet' },
  { dir: 'evm', prefix: 'op-mainnet-', network: 'optimism-mainnet' },
  { dir: 'evm', prefix: 'base-goerli-', network: 'base-mainnet', note: 'Base Goerli testnet block 1041847 served as base-mainnet' },
  { dir: 'evm', prefix: 'polygon-pos-', network: 'polygon-mainnet' },
  { dir: 'solana', prefix: 'sol-mainnet-', network: 'solana-mainnet' },
  { dir: 'solana', prefix: 'sol-devnet-', network: 'solana-devnet' },
  { dir: 'tron', prefix: 'tron-mainnet', network: 'tron-mainnet' },
  { dir: 'bitcoin', prefix: 'btc-mainnet', network: 'bitcoin-mainnet' },
];

/** The network a fixture file is served as, from its folder and name; undefined for others. */
export function networkOfFixture(path: string): string | undefined {
  const normalized = path.replace(/\\/g, '/');
  const name = baseName(normalized);
  const dir = normalized.split('/').slice(-2, -1)[0] ?? '';
  return FIXTURE_SOURCES.find((s) => s.dir === dir && name.startsWith(s.prefix))?.network;
}

/** Fixture documents grouped by the network they are served as; files of no network are left out. */
export function groupByNetwork(docs: readonly FixtureDoc[]): Map<string, FixtureDoc[]> {
  const out = new Map<string, FixtureDoc[]>();
  for (const doc of docs) {
    const network = networkOfFixture(doc.path);
    if (!network) continue;
    const list = out.get(network) ?? [];
    list.push(doc);
    out.set(network, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.path.localeCompare(b.path));
  return out;
}
