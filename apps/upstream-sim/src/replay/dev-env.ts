import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * After `make up` the development credentials live in .run/dev.env; a variable set in the
 * environment still wins. So `npm run replay -- --all` and `make demo` work right after `make up`.
 */
export function withDevEnv(env: NodeJS.ProcessEnv, file = path.resolve(__dirname, '../../../../.run/dev.env')): Record<string, string | undefined> {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return env;
  }
  const fromFile: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) fromFile[m[1]] = m[2];
  }
  return { ...fromFile, ...env };
}
