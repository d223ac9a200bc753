import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import {
  createRegistryTopics,
  freePort,
  parsePrometheusText,
  readFixtureBytes,
  readTopic,
  spawnTs,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitReady,
  type RunningProcess,
  readJson,
} from '@chainpipe/testing';

const SECRET = 'stream-secret-for-tests';

/** One real fixture per chain family, posted as the bytes a streamer would send. */
const FIXTURES: { file: string; network: string }[] = [
  { file: 'evm/eth-mainnet-17053184.block_fulltx.json', network: 'ethereum-mainnet' },
  { file: 'solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json', network: 'solana-devnet' },
  { file: 'tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json', network: 'tron-mainnet' },
  { file: 'bitcoin/btc-mainnet-766391.getblock_verbosity2.json', network: 'bitcoin-mainnet' },
];

async function startIngest(env: Record<string, string>): Promise<{ proc: RunningProcess; url: string; opsUrl: string }> {
  const port = await freePort();
  const opsPort = await freePort();
  const proc = spawnTs('apps/chain-ingest/src/main.ts', {
    STREAM_SECRET: SECRET,
    PORT: String(port),
    OPS_PORT: String(opsPort),
    KAFKA_BROKERS: testEnv().kafkaBrokers.join(','),
    ...env,
  });
  await waitReady(proc, opsPort);
  return { proc, url: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}` };
}

function post(url: string, body: Buffer | string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/octet-stream', ...headers } });
}

describe('chain-ingest (real HTTP, real broker)', function () {
  let prefix: string;
  let app: { proc: RunningProcess; url: string; opsUrl: string };
  let topic: string;

  before(async () => {
    prefix = uniquePrefix('ingest');
    topic = prefix + TOPICS.chainRaw.name;
    await createRegistryTopics(prefix, [TOPICS.chainRaw]);
    app = await startIngest({ KAFKA_TOPIC_PREFIX: prefix });
  });

  after(async () => {
    expect(await stopProcess(app.proc)).to.equal(0);
  });

  it('publishes real fixture blocks of every chain family byte for byte, keyed by network, with its headers', async () => {
    for (const f of FIXTURES) {
      const res = await post(`${app.url}/stream`, readFixtureBytes(f.file), {
        'content-secret-x': SECRET,
        'cl-stream-network': f.network,
        'batch-start-range': '42',
        'stream-dataset': 'block',
      });
      expect(res.status, f.file).to.equal(200);
      expect(await readJson(res)).to.deep.equal({ code: 0, message: 'ok', data: null });
    }
    const messages = await readTopic(topic, FIXTURES.length);
    expect(messages).to.have.length(FIXTURES.length);
    for (const f of FIXTURES) {
      const m = messages.find((x) => x.key?.toString() === f.network);
      expect(m, f.network).to.not.equal(undefined);
      expect(Buffer.compare(m!.value!, readFixtureBytes(f.file)), `${f.file} bytes`).to.equal(0);
      const h = Object.fromEntries(Object.entries(m!.headers!).map(([k, v]) => [k, v!.toString()]));
      expect(h.network).to.equal(f.network);
      expect(h.content_encoding).to.equal('identity');
      expect(h.ingest_route).to.equal('stream');
      expect(h['batch-start-range']).to.equal('42');
      expect(h['stream-dataset']).to.equal('block');
      expect(Number(h.received_at)).to.be.within(Date.now() - 120_000, Date.now());
      expect(h).to.not.have.property('content-secret-x');
    }
  });

  it('accepts gzip bodies, the stream-network header, the /tx/api/v1 layout and /webhook without a secret', async () => {
    const bytes = readFixtureBytes('evm/eth-mainnet-483920.eth_getBlockByNumber_full.json');
    const gz = await post(`${app.url}/tx/api/v1/stream`, gzipSync(bytes), { 'content-secret-x': SECRET, 'stream-network': 'ethereum-sepolia', 'content-encoding': 'gzip' });
    expect(gz.status).to.equal(200);
    const hook = await post(`${app.url}/webhook`, bytes, { 'cl-stream-network': 'bsc-testnet' });
    expect(hook.status).to.equal(200);
    const messages = await readTopic(topic, FIXTURES.length + 2);
    const sepolia = messages.find((m) => m.key?.toString() === 'ethereum-sepolia')!;
    expect(Buffer.compare(sepolia.value!, bytes)).to.equal(0);
    expect(sepolia.headers!.content_encoding!.toString()).to.equal('gzip');
    const bsc = messages.find((m) => m.key?.toString() === 'bsc-testnet')!;
    expect(bsc.headers!.ingest_route!.toString()).to.equal('webhook');
  });

  it('answers 401 for a wrong or missing secret and 400 for a missing, unknown network or an empty body, publishing nothing', async () => {
    const body = '{"data":[]}';
    const cases: [Record<string, string>, number, RegExp, string?][] = [
      [{ 'content-secret-x': 'wrong', 'cl-stream-network': 'ethereum-mainnet' }, 401, /secret/],
      [{ 'cl-stream-network': 'ethereum-mainnet' }, 401, /secret/],
      [{ 'content-secret-x': SECRET }, 400, /missing network/],
      [{ 'content-secret-x': SECRET, 'cl-stream-network': 'dogecoin-mainnet' }, 400, /unknown network/],
      [{ 'content-secret-x': SECRET, 'cl-stream-network': 'ethereum-mainnet' }, 400, /empty body/, ''],
      [{ 'content-secret-x': SECRET, 'cl-stream-network': 'ethereum-mainnet', 'content-encoding': 'gzip' }, 400, /.+/, 'not gzip at all'],
    ];
    for (const [headers, status, msg, overrideBody] of cases) {
      const res = await post(`${app.url}/stream`, overrideBody ?? body, headers);
      expect(res.status, JSON.stringify(headers)).to.equal(status);
      const json = await readJson(res);
      expect(json.code).to.equal(status);
      expect(json.message).to.match(msg);
      expect(json.data).to.equal(null);
    }
    const messages = await readTopic(topic, FIXTURES.length + 2);
    expect(messages).to.have.length(FIXTURES.length + 2);
  });

  it('refuses a 20 MiB body with 413, stays up, and takes the next request', async () => {
    const huge = Buffer.alloc(20 * 1024 * 1024, 0x61);
    let status: number | undefined;
    try {
      const res = await post(`${app.url}/stream`, huge, { 'content-secret-x': SECRET, 'cl-stream-network': 'ethereum-mainnet' });
      status = res.status;
      expect((await readJson(res)).message).to.equal('request body too large');
    } catch (err) {
      throw new Error(`the server must answer 413, not drop the connection: ${String(err)}`);
    }
    expect(status).to.equal(413);
    // A gzip bomb: 20 MiB once inflated, a few KiB on the wire.
    const bomb = await post(`${app.url}/stream`, gzipSync(huge), { 'content-secret-x': SECRET, 'cl-stream-network': 'ethereum-mainnet', 'content-encoding': 'gzip' });
    expect(bomb.status).to.equal(413);
    expect((await fetch(`${app.opsUrl}/readyz`)).status).to.equal(200);
    const ok = await post(`${app.url}/stream`, '{"data":[1]}', { 'content-secret-x': SECRET, 'cl-stream-network': 'ethereum-mainnet' });
    expect(ok.status).to.equal(200);
  });

  it('serves its OpenAPI document and the rendered /docs page with the renderer from node_modules, without a secret', async () => {
    const doc = await fetch(`${app.url}/openapi.json`);
    expect(doc.status).to.equal(200);
    const body = (await doc.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(body.openapi).to.equal('3.1.0');
    expect(Object.keys(body.paths).sort()).to.deep.equal(['/stream', '/tx/api/v1/stream', '/tx/api/v1/webhook', '/webhook']);
    const page = await fetch(`${app.url}/docs`);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    const html = await page.text();
    // Both URLs relative to the page, served by the app itself: the page needs no network.
    expect(html).to.include('spec-url="openapi.json"').and.include('src="docs/redoc.standalone.js"');
    const script = await fetch(`${app.url}/docs/redoc.standalone.js`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/javascript/);
    expect((await script.arrayBuffer()).byteLength).to.be.greaterThan(100_000);
  });

  it('serves /metrics as valid Prometheus text with the ingest counters', async () => {
    const res = await fetch(`${app.opsUrl}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/text\/plain/);
    const exposition = parsePrometheusText(await res.text());
    const sample = (name: string, labels: Record<string, string>) =>
      exposition.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    expect(sample('chainpipe_ingest_requests_total', { route: 'stream', network: 'ethereum-mainnet', status: '200' })?.value).to.be.at.least(2);
    expect(sample('chainpipe_ingest_requests_total', { route: 'stream', status: '401' })?.value).to.equal(2);
    expect(sample('chainpipe_ingest_bytes_total', { network: 'bitcoin-mainnet' })?.value).to.equal(readFixtureBytes(FIXTURES[3].file).length);
    expect(exposition.types.get('chainpipe_ingest_publish_duration_seconds')).to.equal('histogram');
    expect(exposition.types.get('chainpipe_process_cpu_user_seconds_total')).to.equal('counter');
    expect(sample('chainpipe_http_requests_total', { route: '/stream', status: '413' })?.value).to.be.at.least(1);
  });
});
