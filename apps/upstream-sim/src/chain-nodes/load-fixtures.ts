import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { FIXTURE_SOURCES, type FixtureDoc } from './catalog';

/**
 * Reads and parses every JSON fixture of the chain folders under `root` (the only I/O of the
 * chain nodes; indexing is pure). A missing folder or a file that is not JSON stops the boot:
 * a simulator silently serving less than it should would make tests lie.
 */
export function loadFixtureDocs(root: string): FixtureDoc[] {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new Error(`fixtures folder ${root} does not exist (set FIXTURES_DIR)`);
  const dirs = [...new Set(FIXTURE_SOURCES.map((s) => s.dir))];
  const docs: FixtureDoc[] = [];
  for (const dir of dirs) {
    const abs = path.join(root, dir);
    if (!existsSync(abs)) continue;
    for (const name of readdirSync(abs).filter((n) => n.endsWith('.json')).sort()) {
      const file = path.join(abs, name);
      try {
        docs.push({ path: `${dir}/${name}`, json: JSON.parse(readFileSync(file, 'utf8')) });
      } catch (err) {
        throw new Error(`fixture ${file} is not valid JSON: ${(err as Error).message}`);
      }
    }
  }
  return docs;
}
