import { resolvePackagesFromBuild } from '@chainpipe/testing/src/built-packages';

/**
 * `npm run bench -- <name>`: runs bench/<name>.ts. Each benchmark measures a hot path next to a
 * raw baseline doing the same work in the same run and prints the ratio.
 *
 * With `CHAINPIPE_BUILT=1` after `npm run build`, the project's packages run compiled, as
 * deployed: those a bench loads in its own process (`resolvePackagesFromBuild`) and the apps it
 * starts as processes (the test kit's `spawnTs`). The benches' own code (the raw baselines among
 * it) runs under tsx either way.
 */
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
  if (resolvePackagesFromBuild()) console.log('packages: compiled, from dist/ (CHAINPIPE_BUILT=1)');
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
