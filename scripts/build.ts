import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm run build`: the JavaScript production runs, in dist/.
 *
 * tsc compiles the apps, their libraries, the migrations and the topic script with the repo's own
 * layout (dist/apps/<app>/src/main.js), so every path the code derives from `__dirname` holds in
 * dist/ as it does in the sources once the files they point at are copied beside: schemas/
 * (libs/contracts loads them), the chain fixtures (upstream-sim serves them) and every file of
 * the compiled folders that is not TypeScript (market-gateway's live chart page). Each workspace
 * package is linked from dist/node_modules/@chainpipe/<name> to its compiled self: Node's
 * lookup from dist/apps/... meets those links before the repo's node_modules, where the
 * workspace links lead to the TypeScript sources that tsx, the tests, tsc and eslint keep using.
 * Third-party packages resolve further up, from the repo's (or the image's) node_modules.
 *
 * The tree is built beside dist/ and swapped in at the end: a failed build leaves the previous
 * one whole, and no file of a removed source lingers (a stale compiled migration would run).
 */
const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'dist');
const STAGE = path.join(ROOT, 'dist.new');
/** Files the compiled code reads at run time, by their repo path (copied to the same path under dist/). */
const ASSETS = ['schemas', 'test/fixtures/chain'];

/**
 * Every file of the compiled folders that is not TypeScript (a page and its scripts, say) goes
 * beside the compiled modules, at its path relative to them: code reads such files from
 * `__dirname`, and a new one needs no change here.
 */
function copyFilesBesideCode(): number {
  let copied = 0;
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = path.join(rel, e.name);
      if (e.isDirectory()) walk(child);
      else if (e.isFile() && !e.name.endsWith('.ts')) {
        mkdirSync(path.dirname(path.join(STAGE, child)), { recursive: true });
        cpSync(path.join(ROOT, child), path.join(STAGE, child));
        copied += 1;
      }
    }
  };
  for (const group of ['apps', 'libs']) {
    for (const dir of readdirSync(path.join(ROOT, group))) {
      // Only packages the build compiles (not the test kit): their src/ and the migrations.
      if (!existsSync(path.join(STAGE, group, dir))) continue;
      for (const sub of ['src', 'migrations']) if (existsSync(path.join(ROOT, group, dir, sub))) walk(path.join(group, dir, sub));
    }
  }
  return copied;
}

function compile(): void {
  const tsc = require.resolve('typescript/bin/tsc');
  const res = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', STAGE], { cwd: ROOT, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`tsc failed (${res.status ?? res.signal})`);
}

/**
 * Each compiled workspace package gets its package.json (`main` and any subpath `exports` the
 * compiled modules) and a link
 * dist/node_modules/@chainpipe/<name> → dist/<libs|apps>/<dir>, like the workspace links npm
 * makes, so subpath imports (`@chainpipe/runtime/pure`) resolve as well. Relative links: the tree
 * can be copied anywhere (Docker's COPY keeps them).
 */
function linkPackages(): string[] {
  const linked: string[] = [];
  for (const group of ['libs', 'apps']) {
    for (const dir of readdirSync(path.join(ROOT, group)).sort()) {
      const manifest = path.join(ROOT, group, dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; main?: string; types?: string; scripts?: unknown; exports?: Record<string, string> };
      // Packages the build leaves out (the test kit) get no link: requiring one from dist/ fails loudly.
      if (!pkg.main?.endsWith('.ts') || !existsSync(path.join(STAGE, group, dir, pkg.main.replace(/\.ts$/, '.js')))) continue;
      // Subpath exports (`@chainpipe/runtime/pure`) point at the compiled modules too; typesVersions is for tsc only.
      const exports = pkg.exports && Object.fromEntries(Object.entries(pkg.exports).map(([sub, file]) => [sub, file.replace(/\.ts$/, '.js')]));
      const compiled = { ...pkg, main: pkg.main.replace(/\.ts$/, '.js'), types: undefined, typesVersions: undefined, scripts: undefined, exports };
      writeFileSync(path.join(STAGE, group, dir, 'package.json'), `${JSON.stringify(compiled, null, 2)}\n`);
      const link = path.join(STAGE, 'node_modules', pkg.name);
      mkdirSync(path.dirname(link), { recursive: true });
      symlinkSync(path.relative(path.dirname(link), path.join(STAGE, group, dir)), link, 'dir');
      linked.push(pkg.name);
    }
  }
  return linked;
}

function main(): void {
  const started = Date.now();
  rmSync(STAGE, { recursive: true, force: true });
  compile();
  for (const asset of ASSETS) cpSync(path.join(ROOT, asset), path.join(STAGE, asset), { recursive: true });
  const beside = copyFilesBesideCode();
  // dist/ is self-describing wherever it is copied: CommonJS, like the sources.
  writeFileSync(path.join(STAGE, 'package.json'), `${JSON.stringify({ name: 'chainpipe-dist', private: true, type: 'commonjs' }, null, 2)}\n`);
  const linked = linkPackages();
  rmSync(OUT, { recursive: true, force: true });
  renameSync(STAGE, OUT);
  console.log(`build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s, ${linked.length} packages, ${beside} files beside the code (node dist/apps/<app>/src/main.js)`);
}

main();
