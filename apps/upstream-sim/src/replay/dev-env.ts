import { readFileSync } from 'node:fs';
import path from 'node:path';
import { portOffset } from '@chainpipe/runtime';

/**
 * The development credentials of the stack of CHAINPIPE_PORT_OFFSET: .run/dev.env, or
 * .run/port-offset-<N>/dev.env for a stack moved by N (the folders scripts/dev/stack-env.sh names).
 */
export function devEnvFile(env: NodeJS.ProcessEnv): string {
  const offset = portOffset(env);
  return path.resolve(__dirname, '../../../../.run', offset === 0 ? '' : `port-offset-${offset}`, 'dev.env');
}

/**
 * After `make up` the development credentials live in the stack's dev.env; a variable set in the
 * environment still wins. So `npm run replay -- --all` and `make demo` work right after `make up`.
 */
export function withDevEnv(env: NodeJS.ProcessEnv, file = devEnvFile(env)): Record<string, string | undefined> {
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
