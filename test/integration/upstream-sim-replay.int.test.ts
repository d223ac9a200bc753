import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import {
  CHAIN_FIXTURES_DIR,
  REPO_ROOT,
  createRegistryTopics,
  freePort,
  readFixtureJson,
  readTopic,
  spawnTs,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitReady,
  type RunningProcess,
} from '@chainpipe/testing';
import { DEFAULT_REPLAY_SET, replayFixtures } from '@chainpipe/upstream-sim';

const SECRET = 'replay-secret-for-tests';

/** What the default set posts, derived from the fixtures themselves. */
function expectedDefaultPosts(): { network: string; range: number; data: unknown[]; dataset: string }[] {
  return DEFAULT_REPLAY_SET.map((e) => {
    if (e.dataset === 'block_with_receipts') {
      const block = readFixtureJson(e.block);
      return { network: e.network, dataset: e.dataset, range: parseInt(block.number, 16), data: [{ block, receipts: readFixtureJson(e.receipts) }] };
    }
    const raw = readFixtureJson(e.file);
    const value = raw && typeof raw === 'object' && 'jsonrpc' in raw ? raw.result : raw;
    const range = value.height ?? value.block_header?.raw_data?.number ?? value.parentSlot + 1;
    return { network: e.network, dataset: e.dataset, range, data: [value] };
  });
}

describe('fixture replayer → real chain-ingest → chain.raw.v1 (real broker)', function () {
  let prefix: string;
  let topic: string;
  let ingest: RunningProcess;
  let target: string;

  before(async () => {
    prefix = uniquePrefix('replay');
    topic = prefix + TOPICS.chainRaw.name;
    await createRegistryTopics(prefix, [TOPICS.chainRaw]);
    const port = await freePort();
    const opsPort = await freePort();
    ingest = spawnTs('apps/chain-ingest/src/main.ts', {
      STREAM_SECRET: SECRET,
      PORT: String(port),
      OPS_PORT: String(opsPort),
      KAFKA_BROKERS: testEnv().kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
    });
    await waitReady(ingest, opsPort);
    target = `http://127.0.0.1:${port}/stream`;
  });

  after(async () => {
    expect(await stopProcess(ingest)).to.equal(0);
  });

  it('replays the default set in-process: every post 200, each on the topic keyed by network with the streamer headers', async () => {
    const lines: string[] = [];
    const results = await replayFixtures({ target, secret: SECRET, all: true, fixturesDir: CHAIN_FIXTURES_DIR, onResult: (r) => lines.push(`${r.status} ${r.network}`) });
    const expected = expectedDefaultPosts();
    expect(results.map((r) => [r.status, r.network, r.startRange])).to.deep.equal(expected.map((e) => [200, e.network, e.range]));
    expect(lines).to.have.length(expected.length);

    const messages = await readTopic(topic, expected.length, 30_000);
    expect(messages).to.have.length(expected.length);
    for (const e of expected) {
      const m = messages.find((x) => x.key?.toString() === e.network && x.headers?.['batch-start-range']?.toString() === String(e.range));
      expect(m, `${e.network} ${e.range} on the topic`).to.not.equal(undefined);
      const h = Object.fromEntries(Object.entries(m!.headers!).map(([k, v]) => [k, v?.toString()]));
      expect(h).to.include({ network: e.network, 'stream-network': e.network, 'stream-dataset': e.dataset, 'batch-end-range': String(e.range), content_encoding: 'identity', ingest_route: 'stream' });
      const body = JSON.parse(m!.value!.toString('utf8'));
      expect(body.data).to.deep.equal(e.data);
      expect(body.metadata).to.include({ network: e.network, dataset: e.dataset, batch_start_range: e.range, batch_end_range: e.range });
      expect(body.metadata.data_size_bytes).to.equal(Buffer.byteLength(JSON.stringify(e.data)));
    }
  });

  it('replays one file gzipped as the network asked for, and a wrong secret is refused with nothing published', async () => {
    const file = 'bitcoin/btc-mainnet-766393.getblock_verbosity2.json';
    const [gz] = await replayFixtures({ target, secret: SECRET, files: [file], gzip: true, fixturesDir: CHAIN_FIXTURES_DIR });
    expect(gz).to.include({ status: 200, ok: true, network: 'bitcoin-mainnet', dataset: 'block' });
    const [refused] = await replayFixtures({ target, secret: 'wrong', files: [file], fixturesDir: CHAIN_FIXTURES_DIR });
    expect(refused).to.include({ status: 401, ok: false });

    // The default set of the previous test plus this one post.
    const messages = await readTopic(topic, DEFAULT_REPLAY_SET.length + 1);
    const block = readFixtureJson(file);
    const posted = messages.filter((x) => x.headers?.['batch-start-range']?.toString() === String(block.height));
    expect(posted, 'the gzip post once, the refused one not at all').to.have.length(1);
    const m = posted[0];
    expect(m.key!.toString()).to.equal('bitcoin-mainnet');
    expect(m.headers!.content_encoding!.toString()).to.equal('gzip');
    // chain-ingest stores the inflated body.
    expect(JSON.parse(m.value!.toString('utf8')).data).to.deep.equal([block]);
  });

  it('runs as a command: one line per post with the HTTP status, exit 0', async () => {
    // spawnTs takes no arguments: the CLI runs the way `npm run replay --` runs it.
    const proc = spawn(process.execPath, ['--require', 'tsx/cjs', 'apps/upstream-sim/src/replay-cli.ts', '--target', target, '--network', 'tron-mainnet'], {
      cwd: REPO_ROOT,
      env: { ...process.env, STREAM_SECRET: SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect(code, out).to.equal(0);
    const tron = readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json');
    expect(out.trim().split('\n')).to.have.length(1);
    expect(out).to.match(new RegExp(`^200 tron-mainnet block ${tron.block_header.raw_data.number} \\d+B tron-mainnet-61132092\\n$`));
  });
});
