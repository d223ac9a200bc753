import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The dependency review, recorded without `npm audit` (the registry this project builds against
 * answers it with 405): deploy/dependency-review.txt lists every package package-lock.json pins,
 * `name@version`, production or development, and its integrity hash, as last reviewed. A change
 * of the lockfile leaves the record stale until someone reviews what changed and writes it again,
 * so a new or moved dependency never slips in unread:
 *
 * - `npx tsx scripts/dependency-review.ts --write` checks the installed tree (`npm ls --all`)
 *   against the lockfile and writes the record from the lockfile;
 * - `--check` (CI, a deployment's build) fails when the installed tree differs from the lockfile
 *   (missing, extraneous or invalid packages, another version) or the record differs from it;
 * - test/contracts/dependency-review.test.ts holds the record to the lockfile on every test run.
 *
 * How a deployment runs an advisory audit on top: docs/operations.md, "Dependency review".
 */
export const ROOT = path.resolve(__dirname, '..');
export const LOCKFILE = path.join(ROOT, 'package-lock.json');
export const RECORD = path.join(ROOT, 'deploy/dependency-review.txt');

export interface PinnedPackage {
  name: string;
  version: string;
  dev: boolean;
  /** Only for the platforms it is built for (esbuild's binaries…): may be absent from an install. */
  optional: boolean;
  integrity: string;
}

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  link?: boolean;
  integrity?: string;
}

/** Every package the lockfile pins (third-party ones: the workspace's own links left out), one per name and version. */
export function pinnedPackages(lock: { packages?: Record<string, LockEntry> }): PinnedPackage[] {
  const byKey = new Map<string, PinnedPackage>();
  for (const [where, entry] of Object.entries(lock.packages ?? {})) {
    const at = where.lastIndexOf('node_modules/');
    if (at < 0 || entry.link || !entry.version) continue;
    const name = where.slice(at + 'node_modules/'.length);
    const key = `${name}@${entry.version}`;
    const dev = Boolean(entry.dev || entry.devOptional);
    const seen = byKey.get(key);
    // One name and version installed in several places: production wins over development.
    if (seen) {
      seen.dev &&= dev;
      seen.optional &&= Boolean(entry.optional || entry.devOptional);
      continue;
    }
    byKey.set(key, { name, version: entry.version, dev, optional: Boolean(entry.optional || entry.devOptional), integrity: entry.integrity ?? '' });
  }
  return [...byKey.values()].sort((a, b) => (a.name === b.name ? a.version.localeCompare(b.version) : a.name < b.name ? -1 : 1));
}

export const RECORD_HEADER = [
  '# Dependency review: every third-party package package-lock.json pins, as reviewed.',
  '# name@version <tab> prod|dev <tab> integrity. Written by `npx tsx scripts/dependency-review.ts --write`',
  '# after a dependency change has been reviewed; test/contracts/dependency-review.test.ts fails while it is stale.',
];

export function renderRecord(packages: readonly PinnedPackage[]): string {
  return [...RECORD_HEADER, ...packages.map((p) => `${p.name}@${p.version}\t${p.dev ? 'dev' : 'prod'}\t${p.integrity}`), ''].join('\n');
}

/** The record's package lines, comments left out. */
export function recordLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

interface LsNode {
  version?: string;
  resolved?: string;
  missing?: boolean;
  invalid?: string | boolean;
  extraneous?: boolean;
  dependencies?: Record<string, LsNode>;
}

/** `name@version` of every package of an `npm ls --all --json` tree, and what npm found wrong with it. */
export function installedPackages(tree: LsNode): { installed: Set<string>; problems: string[] } {
  const installed = new Set<string>();
  const problems: string[] = [];
  const walk = (deps: Record<string, LsNode> | undefined) => {
    for (const [name, node] of Object.entries(deps ?? {})) {
      // The workspace's own packages (file: links) are the project, not a dependency.
      if (node.resolved?.startsWith('file:') || name.startsWith('@chainpipe/')) {
        walk(node.dependencies);
        continue;
      }
      if (node.missing) problems.push(`${name}: missing`);
      else if (node.invalid) problems.push(`${name}@${node.version}: invalid (${String(node.invalid)})`);
      else if (node.extraneous) problems.push(`${name}@${node.version}: extraneous`);
      if (node.version) installed.add(`${name}@${node.version}`);
      walk(node.dependencies);
    }
  };
  walk(tree.dependencies);
  return { installed, problems };
}

/** What differs between the installed tree and the lockfile: installed but not pinned, or pinned (for every platform) but not installed. */
export function treeAgainstLock(installed: ReadonlySet<string>, pinned: readonly PinnedPackage[]): string[] {
  const keys = new Set(pinned.map((p) => `${p.name}@${p.version}`));
  const out: string[] = [];
  for (const k of installed) if (!keys.has(k)) out.push(`${k}: installed but not in package-lock.json`);
  for (const p of pinned) if (!p.optional && !installed.has(`${p.name}@${p.version}`)) out.push(`${p.name}@${p.version}: in package-lock.json but not installed`);
  return out.sort();
}

function npmLs(): LsNode {
  // npm ls exits 1 when it finds a problem; its JSON still says which.
  try {
    return JSON.parse(execFileSync('npm', ['ls', '--all', '--json'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] })) as LsNode;
  } catch (err) {
    const out = (err as { stdout?: string }).stdout;
    if (out) return JSON.parse(out) as LsNode;
    throw err;
  }
}

if (require.main === module) {
  const mode = process.argv[2];
  if (mode !== '--write' && mode !== '--check') {
    console.error('usage: npx tsx scripts/dependency-review.ts --write | --check');
    process.exit(2);
  }
  const pinned = pinnedPackages(JSON.parse(readFileSync(LOCKFILE, 'utf8')));
  const { installed, problems } = installedPackages(npmLs());
  const drift = [...problems, ...treeAgainstLock(installed, pinned)];
  if (drift.length) {
    console.error(`the installed tree (npm ls --all) differs from package-lock.json:\n  ${drift.join('\n  ')}`);
    process.exit(1);
  }
  const record = renderRecord(pinned);
  if (mode === '--write') {
    writeFileSync(RECORD, record);
    console.log(`${path.relative(ROOT, RECORD)}: ${pinned.length} packages (${pinned.filter((p) => !p.dev).length} production)`);
  } else {
    let current = '';
    try {
      current = readFileSync(RECORD, 'utf8');
    } catch {
      // no record yet: stale
    }
    if (recordLines(current).join('\n') !== recordLines(record).join('\n')) {
      console.error(`${path.relative(ROOT, RECORD)} is stale: review the dependency change, then npx tsx scripts/dependency-review.ts --write`);
      process.exit(1);
    }
    console.log(`installed tree and ${path.relative(ROOT, RECORD)} match package-lock.json (${installed.size} packages installed)`);
  }
}
