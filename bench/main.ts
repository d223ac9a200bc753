import { spawnSync } from 'node:child_process';
import { resolvePackagesFromBuild } from '@chainpipe/testing/built-packages';

/**
 * `npm run bench -- <name>`: runs bench/<name>.ts. Each benchmark measures a hot path next to a
 * raw baseline doing the same work in the same run and prints the ratio.
 *
 * With `CHAINPIPE_BUILT=1` after `npm run build`, the project's packages run compiled, as
 * deployed: those a bench loads in its own process (`resolvePackagesFromBuild`) and the apps it
 * starts as processes (the test kit's `spawnTs`). The benches' own code (the raw baselines among
 * it) runs under tsx either way.
 */
/**
 * Benches that run an app's code in this process, and the app: the process then runs with that
 * app's node options (APP_NODE_OPTIONS), as the app does, its raw baselines alike.
 */
const IN_PROCESS_APP: Record<string, string> = { kline: 'kline-aggregator' };
/** Set on the process started again with those options (so that it does not start itself again). */
const OPTIONS_ENV = 'CHAINPIPE_BENCH_NODE_OPTIONS';

const BENCHES: Record<string, string> = {
  ingest: './ingest',
  parse: './parse',
  search: './search',
  price: './price',
  kline: './kline',
  delivery: './delivery',
  quotes: './quotes',
  publish: './publish',
  startup: './startup',
  pipeline: './pipeline',
};

async function main(): Promise<void> {
  const names = process.argv.slice(2).filter(Boolean);
  if (!names.length || names.some((n) => !BENCHES[n])) {
    console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [...]`);
    process.exit(2);
  }
  const built = resolvePackagesFromBuild();
  const { appNodeOptions } = await import('@chainpipe/runtime');
  const wanted = [...new Set(names.flatMap((n) => (IN_PROCESS_APP[n] ? appNodeOptions(IN_PROCESS_APP[n]) : [])))];
  if (wanted.length && process.env[OPTIONS_ENV] === undefined) {
    const again = spawnSync(process.execPath, [...wanted, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, [OPTIONS_ENV]: wanted.join(' ') } });
    process.exit(again.status ?? 1);
  }
  if (built) console.log('packages: compiled, from dist/ (CHAINPIPE_BUILT=1)');
  if (process.env[OPTIONS_ENV]) console.log(`node options: ${process.env[OPTIONS_ENV]} (the in-process app's, APP_NODE_OPTIONS)`);
  // The project's Kafka package before any bench loads kafkajs, as in every app: it replaces a
  // module kafkajs requires as it loads (linear-grouping.ts), for the apps' code a bench runs in
  // this process and for its raw kafkajs baselines alike.
  const { linearGroupingInstalled } = (await import('@chainpipe/kafka')) as { linearGroupingInstalled: boolean };
  if (!linearGroupingInstalled) console.log("kafkajs loaded before the project's Kafka package: its own grouping stays (quadratic)");
  for (const name of names) {
    const mod = (await import(BENCHES[name])) as { run: () => Promise<void> };
    console.log(`\n== bench ${name}`);
    await mod.run();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
