import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import {
  DIST_DIR,
  REPO_ROOT,
  builtPath,
  collectTopic,
  createRegistryTopics,
  datasetOf,
  evmBlockItem,
  FIXTURE_NETWORKS,
  freePort,
  randomSuffix,
  rebaseBlock,
  spawnBuilt,
  stopProcess,
  streamerBody,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
  type TopicCollector,
} from '@chainpipe/testing';

/**
 * What production runs: `npm run build`, then apps from dist/ under plain `node` (no tsx, no
 * NODE_OPTIONS), a gateway (chain-ingest: HTTP in, Kafka out, API docs) and a consumer
 * (chain-parser: Kafka in, Postgres and Kafka out) with a real block between them. The rest of the
 * suite runs the TypeScript sources; this is the one place the compiled tree is exercised.
 */
describe('compiled build: npm run build, then apps from dist/ with plain node', () => {
  const secret = `secret-${randomSuffix()}`;
  let prefix: string;
  let db: Knex;
  let ingest: RunningProcess | undefined;
  let parser: RunningProcess | undefined;
  let ingestPort: number;
  let ingestOps: number;
  let parserOps: number;
  let txReader: TopicCollector | undefined;

  before(async function () {
    // tsc over the apps and libraries: 6 s on a 2-core machine, up to 25 s under heavy load.
    this.timeout(180_000);
    // CHAINPIPE_BUILT=1: `make test` built this tree already in this run (once for every suite).
    if (process.env.CHAINPIPE_BUILT !== '1') {
      const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(build.status, `npm run build:\n${build.stdout}${build.stderr}`).to.equal(0);
    }

    prefix = uniquePrefix('built');
    await createRegistryTopics(prefix);
    db = createDb({ url: testEnv().databaseUrl, poolMax: 2 });
    const kafkaEnv = { KAFKA_BROKERS: testEnv().kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix };
    [ingestPort, ingestOps, parserOps] = [await freePort(), await freePort(), await freePort()];
    ingest = spawnBuilt('apps/chain-ingest/src/main.ts', { ...kafkaEnv, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) });
    parser = spawnBuilt('apps/chain-parser/src/main.ts', {
      ...kafkaEnv,
      DATABASE_URL: testEnv().databaseUrl,
      OPS_PORT: String(parserOps),
      CHAIN_PARSER_GROUP: `${prefix}chain-parser`,
    });
    txReader = await collectTopic(prefix + TOPICS.chainTx.name);
    await Promise.all([waitReady(ingest, ingestOps, 60_000), waitReady(parser, parserOps, 60_000)]);
  });

  after(async function () {
    this.timeout(60_000);
    const codes = await Promise.all([ingest, parser].filter((p): p is RunningProcess => !!p).map((p) => stopProcess(p)));
    await txReader?.stop();
    await db?.destroy();
    expect(codes, 'both apps shut down cleanly').to.deep.equal([0, 0]);
  });

  it('dist/ holds no TypeScript but the files the code reads beside itself, and every @chainpipe package resolves from an app to its compiled self', () => {
    const ts = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        if (e.isSymbolicLink()) return [];
        return e.isDirectory() ? ts(p) : e.name.endsWith('.ts') ? [p] : [];
      });
    expect(ts(path.join(DIST_DIR, 'apps')).concat(ts(path.join(DIST_DIR, 'libs')))).to.deep.equal([]);
    // Files the code reads beside itself (market-gateway's live chart page) are there too.
    const plain = (dir: string): string[] =>
      readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        return e.isDirectory() ? plain(p) : e.name.endsWith('.ts') ? [] : [p];
      });
    const beside = ['apps', 'libs'].flatMap((g) => readdirSync(path.join(REPO_ROOT, g)).filter((d) => d !== 'testing').map((d) => `${g}/${d}/src`)).flatMap(plain);
    expect(beside.filter((f) => !existsSync(path.join(DIST_DIR, f))), 'files beside the code missing from dist/').to.deep.equal([]);
    const from = path.dirname(builtPath('apps/chain-parser/src/main.ts'));
    for (const name of ['@chainpipe/runtime', '@chainpipe/contracts', '@chainpipe/db', '@chainpipe/kafka', '@chainpipe/tx-store', '@chainpipe/price/src/seed']) {
      expect(require.resolve(name, { paths: [from] }), name).to.match(new RegExp(`^${DIST_DIR}/libs/.+\\.js$`));
    }
    // Third-party packages come from the repo's node_modules (the image's, in production).
    expect(require.resolve('kafkajs', { paths: [from] })).to.equal(path.join(REPO_ROOT, 'node_modules/kafkajs/index.js'));
  });

  it('the compiled migrations answer to the names the sources recorded: a database migrated by one is current for the other', () => {
    const res = spawnSync(process.execPath, [builtPath('libs/db/src/migrate-cli.ts')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: testEnv().databaseUrl },
    });
    expect(res.status, res.stdout + res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout.trim().split('\n').pop()!)).to.include({ msg: 'migrations_applied' }).and.deep.include({ applied: [] });
  });

  it('a block posted to the compiled chain-ingest is stored and published by the compiled chain-parser', async () => {
    const block = rebaseBlock('evm', evmBlockItem(), 3_000_000_000 + randomInt(1_000_000_000), randomSuffix());
    const network = FIXTURE_NETWORKS.evm;
    const res = await fetch(`http://127.0.0.1:${ingestPort}/stream`, {
      method: 'POST',
      headers: {
        'content-secret-x': secret,
        'cl-stream-network': network,
        'content-type': 'application/json',
        'batch-start-range': String(block.height),
        'stream-dataset': datasetOf('evm'),
      },
      body: streamerBody([block.item], { network, dataset: datasetOf('evm'), start: block.height }),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    const count = block.item.block.transactions.length as number;
    const rows = await waitFor(
      async () => {
        const r = await db('tx.transactions').where({ network, block_hash: block.blockHash }).select('tx_hash');
        return r.length >= count ? r : undefined;
      },
      { timeoutMs: 30_000, what: `${count} rows of the posted block` },
    );
    expect(rows.map((r: { tx_hash: string }) => r.tx_hash)).to.have.members(block.item.block.transactions.map((t: { hash: string }) => t.hash));
    await waitFor(() => (txReader?.messages.length ?? 0) >= count, { timeoutMs: 30_000, what: `${count} chain.tx messages` });
  });

  it('the compiled gateway serves its API documents and the Redoc bundle from node_modules', async () => {
    const doc = await fetch(`http://127.0.0.1:${ingestPort}/openapi.json`);
    expect(doc.status).to.equal(200);
    expect(((await doc.json()) as { paths: Record<string, unknown> }).paths).to.have.property('/stream');
    const bundle = await fetch(`http://127.0.0.1:${ingestPort}/docs/redoc.standalone.js`);
    expect(bundle.status).to.equal(200);
    expect((await bundle.text()).length).to.be.greaterThan(100_000);
  });
});
