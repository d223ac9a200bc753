import { ConfigError, loadConfig } from '@chainpipe/runtime';
import { replayConfig } from './config';
import { REPLAY_USAGE, parseReplayArgs } from './replay/args';
import { withDevEnv } from './replay/dev-env';
import { replayFixtures, type ReplayResult } from './replay/replay';

function line(r: ReplayResult): string {
  const range = r.startRange === r.endRange ? String(r.startRange) : `${r.startRange}..${r.endRange}`;
  return `${r.status ?? 'ERR'} ${r.network} ${r.dataset} ${range} ${r.bytes}B ${r.label}${r.error ? ` — ${r.error.replace(/\s+/g, ' ')}` : ''}`;
}

async function main(): Promise<number> {
  let env;
  try {
    env = loadConfig(replayConfig, withDevEnv(process.env));
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : String(err));
    return 2;
  }
  const parsed = parseReplayArgs(process.argv.slice(2), env);
  if (parsed.kind === 'help') {
    console.log(REPLAY_USAGE);
    return 0;
  }
  if (parsed.kind === 'error') {
    console.error(`${parsed.message}\n\n${REPLAY_USAGE}`);
    return 2;
  }
  const results = await replayFixtures({ ...parsed.options, onResult: (r) => console.log(line(r)) });
  const failed = results.filter((r) => !r.ok).length;
  if (failed > 0) console.error(`${failed} of ${results.length} posts failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(`replay failed: ${(err as Error).message}`);
    process.exitCode = 1;
  },
);
