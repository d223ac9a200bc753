import { existsSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';

// This module imports no workspace package, so installing the resolver below loads none first.

/** The repository's root. */
export const REPO_ROOT = path.resolve(__dirname, '../../..');

/** dist/ of `npm run build`. */
export const DIST_DIR = path.join(REPO_ROOT, 'dist');

/** Where `npm run build` links each compiled workspace package (`dist/node_modules/@chainpipe/<name>`). */
const BUILT_PACKAGES = path.join(DIST_DIR, 'node_modules');

/** `CHAINPIPE_BUILT=1`: dist/ holds the build of this tree (`make test` builds it once for the run). */
export const buildInUse = (): boolean => process.env.CHAINPIPE_BUILT === '1';

/**
 * From now on, `@chainpipe/<name>` (and its deep paths) required in this process resolves to the
 * compiled package in dist/ when `CHAINPIPE_BUILT=1` and dist/ holds a build: an in-process
 * benchmark then runs the code production runs, as `spawnTs` does for a process. tsx's transform
 * of the sources wraps every named function it creates in a naming call (esbuild's keepNames),
 * which a hot path creating closures per request or per record pays for and production does not.
 * A package the build leaves out (the test kit) resolves as before, its own `@chainpipe/*`
 * imports compiled as well, so each package is loaded once. Call it before the first such
 * package is loaded; says whether it took effect.
 */
export function resolvePackagesFromBuild(): boolean {
  if (!buildInUse() || !existsSync(BUILT_PACKAGES)) return false;
  // Node's CommonJS resolver, which tsx hooks as well: Node 20 has no public hook for require().
  const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const resolve = loader._resolveFilename;
  const built = new Map<string, boolean>();
  loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    if (request.startsWith('@chainpipe/')) {
      const name = request.split('/', 2).join('/');
      let inBuild = built.get(name);
      if (inBuild === undefined) built.set(name, (inBuild = existsSync(path.join(BUILT_PACKAGES, name))));
      // Looked up from dist/ as a package, so its package.json's subpath exports apply (`@chainpipe/runtime/pure`).
      if (inBuild) return resolve.call(this, request, rest[0], rest[1], { paths: [DIST_DIR] });
    }
    return resolve.call(this, request, ...rest);
  };
  return true;
}
