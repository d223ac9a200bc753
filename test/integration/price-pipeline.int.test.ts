import { expect } from 'chai';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { createKeyResolver, listen, type StartedServer } from '@chainpipe/http';
import { decimalString, rateString } from '@chainpipe/price';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, createMetricsRegistry } from '@chainpipe/runtime';
import { createRegistryTopics, readFixtureJson, stopProcess, testEnv, uniquePrefix, waitFor } from '@chainpipe/testing';
import { createMarketGatewayApp } from '../../apps/market-gateway/src/app';
import { priceModule } from '../../apps/market-gateway/src/price/module';
import { client, createTestKey, expectOk, expectPriceError, metricValue, simControl, startApp, type Started } from './price/support';

/**
 * The quote pipeline end to end, every app a real process: upstream-sim (quotes, fiat rates and
 * pool upstreams) → price-ingester → price.quotes.v1 (real Kafka) → price-writer → Redis +
 * Postgres → market-gateway, read with a real HTTP client. Prices are pinned in the simulator
 * (its control API), so the expected numbers are the pinned ones times the pinned rates.
 */
describe('price pipeline: simulator → ingester → Kafka → writer → gateway (real processes)', function () {
  const env = testEnv();
  let db: Knex;
  let sim: Started;
  let ingester: Started;
  let writer: Started;
  let gw: Started;
  let key = '';
  const call = client(() => gw.base, () => key);
  const redisPrefix = `${env.runId}:pipeline:`;

  // USDT (CoinMarketCap id 825) = seed tokens 102 (Ethereum), 803 (Solana), 902 (Tron); BTC (id 1) = token 1001.
  const USDT_PRICE = 0.99981234;
  const BTC_PRICE = 64321.5;
  const EUR_PER_USD = 0.9123;
  const JPY_PER_USD = 151.25;

  before(async function () {
    this.timeout(180_000);
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    key = await createTestKey(db, 'price-pipeline');
    const prefix = uniquePrefix('price');
    // market-gateway also reads and writes the candlestick topics (created by the topic script, never by an app).
    await createRegistryTopics(prefix, [TOPICS.priceQuotes, TOPICS.klineCandles, TOPICS.klinePools]);
    sim = await startApp('apps/upstream-sim/src/main.ts', {});
    await simControl(sim.base, 'PUT', '/sim/cmc/quotes/825', { price: USDT_PRICE });
    await simControl(sim.base, 'PUT', '/sim/cmc/quotes/1', { price: BTC_PRICE });
    await simControl(sim.base, 'PUT', '/sim/oxr/rates/EUR', { rate: EUR_PER_USD });
    await simControl(sim.base, 'PUT', '/sim/oxr/rates/JPY', { rate: JPY_PER_USD });
    const kafka = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix };
    [ingester, writer, gw] = await Promise.all([
      startApp(
        'apps/price-ingester/src/main.ts',
        {
          ...kafka,
          DATABASE_URL: env.databaseUrl,
          QUOTES_SOURCE_URL: `${sim.base}/cmc`,
          FIAT_RATES_SOURCE_URL: `${sim.base}/oxr`,
          QUOTES_POLL_INTERVAL_MS: '300',
          FIAT_RATES_POLL_INTERVAL_MS: '300',
          QUOTE_MAX_AGE_MS: '3000',
        },
        { publicPort: false },
      ),
      startApp('apps/price-writer/src/main.ts', { ...kafka, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: redisPrefix, PRICE_WRITER_GROUP: `${prefix}writer` }, { publicPort: false }),
      startApp('apps/market-gateway/src/main.ts', { ...kafka, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: redisPrefix, POOL_UPSTREAM_URL: `${sim.base}/geckoterminal/api/v2` }),
    ]);
  });

  after(async function () {
    this.timeout(60_000);
    for (const p of [gw, writer, ingester, sim]) if (p) expect(await stopProcess(p.proc)).to.equal(0);
    await db?.destroy();
  });

  /** quotes/latest of some ids once every one of them is served. */
  const latestWhenServed = (ids: number[], fiat: string) =>
    waitFor(
      async () => {
        const r = await call('GET', `/price/api/v1/quotes/latest?ids=${ids.join(',')}&fiat=${fiat}`);
        return r.status === 200 && r.body.data.items.length === ids.length ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: `quotes of ${ids} in ${fiat}` },
    );

  describe('GET /quotes/latest', () => {
    it('serves a quote published upstream, converted to the requested fiat through the fiat rates, as strings', async () => {
      const r = await waitFor(
        async () => {
          const res = await latestWhenServed([102, 1001], 'EUR');
          // The rates arrive on their own poll: wait until EUR is the pinned rate.
          return res.body.data.items[0].price === decimalString(USDT_PRICE * EUR_PER_USD) ? res : undefined;
        },
        { timeoutMs: 30_000, what: 'the pinned EUR rate' },
      );
      expect(r.headers.get('cache-control')).to.equal('public, max-age=3, s-maxage=3');
      const [usdt, btc] = r.body.data.items;
      expect(usdt).to.include({ token_id: 102, symbol: 'USDT', name: 'Tether USD', fiat_id: 2, fiat_code: 'EUR' });
      expect(usdt.price).to.equal(decimalString(USDT_PRICE * EUR_PER_USD));
      expect(btc).to.include({ token_id: 1001, symbol: 'BTC', fiat_code: 'EUR', price: decimalString(BTC_PRICE * EUR_PER_USD) });
      // The simulator's BTC supplies: circulating 19,700,000, max 21,000,000; market cap = price × circulating, in EUR.
      expect(btc.max_supply).to.equal('21000000');
      expect(btc.circulating_supply).to.equal('19700000');
      expect(btc.market_cap).to.equal(decimalString(BTC_PRICE * 19_700_000 * EUR_PER_USD));
      for (const item of [usdt, btc]) {
        for (const field of ['price', 'market_cap', 'volume_24h', 'volume_change_24h', 'percent_change_1h', 'percent_change_24h', 'percent_change_7d', 'percent_change_30d', 'fully_diluted_valuation', 'circulating_supply', 'total_supply', 'max_supply']) {
          expect(item[field], field).to.be.a('string');
        }
      }
      // USDT has no max supply upstream: the string field stays a string, empty.
      expect(usdt.max_supply).to.equal('');
    });

    it('defaults to USD; the same asset on several chains has one price; unknown ids are left out', async () => {
      const r = await latestWhenServed([102, 803, 902], 'USD');
      expect(r.body.data.items.map((i: any) => [i.token_id, i.price, i.fiat_code])).to.deep.equal([
        [102, decimalString(USDT_PRICE), 'USD'],
        [803, decimalString(USDT_PRICE), 'USD'],
        [902, decimalString(USDT_PRICE), 'USD'],
      ]);
      const d = expectOk(await call('GET', '/price/api/v1/quotes/latest?ids=102,999999999'));
      expect(d.items.map((i: any) => i.token_id)).to.deep.equal([102]);
      const jpy = await latestWhenServed([1001], 'jpy');
      expect(jpy.body.data.items[0].price).to.equal(decimalString(BTC_PRICE * JPY_PER_USD));
    });

    it('answers 20001 without ids and 400 for malformed ids or an unknown fiat', async () => {
      expectPriceError(await call('GET', '/price/api/v1/quotes/latest'), 400, 20001, 'ids is required');
      expectPriceError(await call('GET', '/price/api/v1/quotes/latest?ids='), 400, 20001, 'ids is required');
      expectPriceError(await call('GET', '/price/api/v1/quotes/latest?ids=1,abc'), 400, 20001, 'ids must be comma-separated integer token ids');
      expectPriceError(await call('GET', '/price/api/v1/quotes/latest?ids=102&fiat=XYZ'), 400, 20001, 'fiat XYZ is not supported');
      expectPriceError(await call('GET', '/price/api/v1/quotes/latest?ids=102', { key: null }), 401, 401, 'unauthorized');
    });
  });

  describe('POST /quotes/batch', () => {
    it('finds tokens by chain type alias, chain id and address; numbers as JSON numbers; max_supply null when unknown', async () => {
      await latestWhenServed([102, 1001], 'USD');
      const r = await call('POST', '/price/api/v1/quotes/batch', {
        body: {
          token_addrs: [
            { chain_type: 'ethereum', chain_id: 1, token_address: '0xdac17f958d2ee523a2206206994597c13d831ec7' },
            { chain_type: 'Solana', chain_id: null, token_address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' },
            { chain_type: 'btc', chain_id: null, token_address: 'BTC' },
            { chain_type: 'evm', chain_id: '56', token_address: '0x0000000000000000000000000000000000000001' },
          ],
          fiat: 'EUR',
        },
      });
      const d = expectOk(r);
      expect(d.items.map((i: any) => i.token_id)).to.deep.equal([102, 803, 1001]);
      const [eth, sol, btc] = d.items;
      expect(eth).to.include({ chain_type: 'evm', chain_id: 1, address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', external_id: '825', symbol: 'USDT', price_usd: USDT_PRICE, max_supply: null });
      expect(sol).to.include({ chain_type: 'svm', chain_id: 1, address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', price_usd: USDT_PRICE });
      expect(btc).to.include({ chain_type: 'utxo', external_id: '1', price_usd: BTC_PRICE, max_supply: 21_000_000, circulating_supply: 19_700_000 });
      // *_usd in USD; market_cap, fully_diluted_valuation, total_volume in the requested fiat (EUR).
      expect(btc.market_cap_usd).to.be.closeTo(BTC_PRICE * 19_700_000, 1e-3);
      expect(btc.market_cap).to.be.closeTo(BTC_PRICE * 19_700_000 * EUR_PER_USD, 1e-3);
      expect(new Date(btc.last_updated).toISOString()).to.equal(btc.last_updated);
      for (const field of ['price_usd', 'market_cap_usd', 'volume_24h_usd', 'percent_change_1h', 'percent_change_24h', 'percent_change_7d', 'percent_change_30d', 'market_cap', 'fully_diluted_valuation', 'total_volume', 'circulating_supply', 'total_supply']) {
        expect(btc[field], field).to.be.a('number');
      }
    });

    it('answers 20003 for an empty or missing list and for malformed JSON, 20001 for a bad entry', async () => {
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: { token_addrs: [] } }), 400, 20003, 'token_addrs is required');
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: {} }), 400, 20003, 'token_addrs is required');
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: { token_addrs: 'x' } }), 400, 20003, 'token_addrs is required');
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: [1] }), 400, 20003, 'token_addrs is required');
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { raw: '{"token_addrs": [' }), 400, 20003, 'invalid JSON body');
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: { token_addrs: [{ chain_type: 'evm', token_address: '0xdac17f958d2ee523a2206206994597c13d831ec7' }] } }), 400, 20001, 'token_addrs[0].chain_id is required for evm chains');
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: { token_addrs: [{ chain_type: 'plasma', chain_id: 1, token_address: 'x' }] } }), 400, 20001, /chain_type "plasma" is not supported/);
      expectPriceError(await call('POST', '/price/api/v1/quotes/batch', { body: { token_addrs: [{ chain_id: 1, token_address: 'x' }] } }), 400, 20001, /chain_type is required/);
    });
  });

  describe('GET /fiats/rates/{base}', () => {
    it('gives every other fiat against the base with 8 decimal places, crossed through USD', async () => {
      const d = await waitFor(
        async () => {
          const res = expectOk(await call('GET', '/price/api/v1/fiats/rates/eur'));
          const usd = res.items.find((i: any) => i.target_fiat_code === 'USD');
          return usd?.rate === rateString(1 / EUR_PER_USD) ? res : undefined;
        },
        { timeoutMs: 20_000, what: 'EUR rates' },
      );
      expect(d.total).to.equal(d.items.length);
      expect(d.items.find((i: any) => i.target_fiat_code === 'EUR')).to.equal(undefined);
      const jpy = d.items.find((i: any) => i.target_fiat_code === 'JPY');
      expect(jpy).to.deep.equal({ target_fiat_id: 3, target_fiat_code: 'JPY', rate: rateString(JPY_PER_USD / EUR_PER_USD), last_updated: jpy.last_updated });
      expect(Date.now() - Date.parse(jpy.last_updated), "the rates' source time").to.be.within(0, 10_000);
      for (const item of d.items) expect(item.rate).to.match(/^\d+\.\d{8}$/);
    });

    it('is an empty success for a base without rates', async () => {
      expect(expectOk(await call('GET', '/price/api/v1/fiats/rates/XYZ'))).to.deep.equal({ total: 0, items: [] });
    });
  });

  describe('the history in Postgres', () => {
    it('keeps one row per asset and upstream timestamp', async () => {
      const rows = await waitFor(async () => {
        const r = await db('price.quote_history').where({ external_id: '825' }).where('price_usd', USDT_PRICE).select('last_updated');
        return r.length >= 2 ? r : undefined;
      }, { what: 'two USDT history rows' });
      const stamps = rows.map((r: any) => new Date(r.last_updated).getTime());
      expect(new Set(stamps).size).to.equal(stamps.length);
    });
  });

  describe('GET /pools', () => {
    // The CoinGecko OpenAPI example pool (fixtures/chain/upstream/coingecko-oas-example.onchain_networks_eth_pools_address.json).
    const fixture = readFixtureJson('upstream/coingecko-oas-example.onchain_networks_eth_pools_address.json');
    const POOL = fixture.data.attributes.address as string;
    const poolFetches = () => metricValue(sim.opsBase, 'chainpipe_upstream_sim_market_requests_total', { upstream: 'geckoterminal', outcome: 'ok' }).then((v) => v ?? 0);

    it('relays the pool detail mapped to the spec fields (chain type alias, any address case)', async () => {
      const d = expectOk(await call('GET', `/price/api/v1/pools?chain_type=ethereum&chain_id=1&pool_address=${POOL.toUpperCase().replace('0X', '0x')}`));
      const a = fixture.data.attributes;
      expect(d).to.include({ id: fixture.data.id, name: a.name, address: POOL, network: 'eth', dex: 'uniswap_v3', pool_created_at: a.pool_created_at, quote_token_price_usd: a.quote_token_price_usd, fdv_usd: a.fdv_usd, market_cap_usd: a.market_cap_usd });
      // included[] of the fixture: WETH is the base token, USDC the quote token.
      const weth = fixture.included.find((i: any) => i.id === fixture.data.relationships.base_token.data.id).attributes;
      expect(d.base_token).to.deep.equal({ address: weth.address, name: weth.name, symbol: weth.symbol, image_url: weth.image_url });
      expect(d.quote_token.symbol).to.equal('USDC');
      expect(d.price_change_percentage).to.deep.equal(a.price_change_percentage);
      expect(d.volume_usd).to.deep.equal(a.volume_usd);
      expect(d.transactions).to.deep.equal(a.transactions);
      // The simulator moves the base price and reserve; they stay decimal strings.
      expect(d.base_token_price_usd).to.match(/^\d+(\.\d+)?$/);
      expect(d.reserve_in_usd).to.match(/^\d+(\.\d+)?$/);
    });

    it('answers data null for an unknown pool, chain or chain type, and 20001 per missing parameter', async () => {
      const nul = async (q: string) => expect(expectOk(await call('GET', `/price/api/v1/pools?${q}`)), q).to.equal(null);
      await nul('chain_type=evm&chain_id=1&pool_address=0x0000000000000000000000000000000000000bad');
      await nul(`chain_type=evm&chain_id=999999&pool_address=${POOL}`);
      await nul(`chain_type=utxo&chain_id=1&pool_address=${POOL}`);
      await nul(`chain_type=plasma&chain_id=1&pool_address=${POOL}`);
      expectPriceError(await call('GET', `/price/api/v1/pools?chain_id=1&pool_address=${POOL}`), 400, 20001, 'chain_type is required');
      expectPriceError(await call('GET', `/price/api/v1/pools?chain_type=evm&pool_address=${POOL}`), 400, 20001, 'chain_id is required');
      expectPriceError(await call('GET', '/price/api/v1/pools?chain_type=evm&chain_id=1'), 400, 20001, 'pool_address is required');
      expectPriceError(await call('GET', '/price/api/v1/pools'), 400, 20001, 'chain_type is required');
    });

    it('fetches a pool once and serves it from the cache; an upstream failure is 503/30001 and poisons nothing', async () => {
      // Solana pool of the new-pools fixture (its first entry), not asked for by any other test.
      const solPool = readFixtureJson('upstream/geckoterminal.networks_solana_new_pools.json').data[0].attributes.address as string;
      const ethTop = readFixtureJson('upstream/geckoterminal.networks_pools_top.json').data[1].attributes.address as string;
      const q = (chainType: string, addr: string) => `/price/api/v1/pools?chain_type=${chainType}&chain_id=1&pool_address=${addr}`;
      const before = await poolFetches();
      const first = expectOk(await call('GET', q('solana', solPool)));
      expect(first.network).to.equal('solana');
      for (let i = 0; i < 3; i++) expect(expectOk(await call('GET', q('svm', solPool)))).to.deep.equal(first);
      expect(await poolFetches()).to.equal(before + 1);

      await simControl(sim.base, 'PUT', '/sim/faults/geckoterminal', { kind: 'http500' });
      try {
        expectPriceError(await call('GET', q('evm', ethTop)), 503, 30001, 'Failed to fetch pool data');
        expectPriceError(await call('GET', q('evm', ethTop)), 503, 30001, 'Failed to fetch pool data');
        // The cached pool is still served while the upstream is down.
        expect(expectOk(await call('GET', q('svm', solPool)))).to.deep.equal(first);
      } finally {
        await simControl(sim.base, 'DELETE', '/sim/faults/geckoterminal');
      }
      const recovered = expectOk(await call('GET', q('evm', ethTop)));
      expect(recovered.address).to.equal(ethTop);
      expect(await poolFetches()).to.equal(before + 2);
    });
  });

  describe('time-driven behaviour (gateway in this process with an injected clock)', () => {
    const RATES_MAX_AGE_MS = 120_000;
    let nowMs = Date.now();
    let server: StartedServer;
    let redis: Redis;
    const at = client(() => `http://127.0.0.1:${server.address.port}`, () => key);
    const POOL = '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640';
    const poolFetches = () => metricValue(sim.opsBase, 'chainpipe_upstream_sim_market_requests_total', { upstream: 'geckoterminal', outcome: 'ok' }).then((v) => v ?? 0);

    before(async () => {
      redis = createRedis({ url: env.redisUrl, keyPrefix: redisPrefix });
      const keys = new ApiKeyRepository(db);
      const app = createMarketGatewayApp({
        logger: createLogger({ name: 'market-gateway-test', level: 'silent' }),
        registry: createMetricsRegistry('market-gateway-test', { defaultMetrics: false }),
        timeoutMs: 15_000,
        modules: [
          priceModule({
            db,
            redis,
            contracts: loadContracts(),
            logger: createLogger({ name: 'market-gateway-test', level: 'silent' }),
            registry: createMetricsRegistry('market-gateway-test', { defaultMetrics: false }),
            resolveKey: createKeyResolver((id) => keys.findKey(id)),
            clock: { now: () => nowMs },
            bodyLimitBytes: 1024 * 1024,
            // Rates age out before quotes here, so that a test sees one without the other.
            freshness: { quoteMaxAgeMs: 600_000, fiatRatesMaxAgeMs: RATES_MAX_AGE_MS },
            referenceRefreshMs: 30_000,
            poolUpstream: { baseUrl: `${sim.base}/geckoterminal/api/v2`, apiKey: '', timeoutMs: 5_000 },
            poolCacheTtlMs: 3_600_000,
          }),
        ],
      });
      server = await listen(app, 0, '127.0.0.1');
    });

    after(async () => {
      await server?.close();
      redis?.disconnect();
    });

    it('keeps a pool for one hour of the clock, then fetches it again', async () => {
      // A cache key of its own: chain_id 1 of evm, address in this run's Redis prefix; the spawned gateway shares the prefix, so start from a fetch.
      nowMs = Date.now() + 10 * 3_600_000;
      const url = `/price/api/v1/pools?chain_type=evm&chain_id=1&pool_address=${POOL}`;
      const n0 = await poolFetches();
      expectOk(await at('GET', url));
      expect(await poolFetches()).to.equal(n0 + 1);
      nowMs += 3_600_000 - 1;
      expectOk(await at('GET', url));
      expect(await poolFetches()).to.equal(n0 + 1);
      nowMs += 2;
      expectOk(await at('GET', url));
      expect(await poolFetches()).to.equal(n0 + 2);
      expectOk(await at('GET', url));
      expect(await poolFetches()).to.equal(n0 + 2);
    });

    it('stops serving a quote once its source timestamp is older than the maximum age', async () => {
      nowMs = Date.now();
      const fresh = expectOk(await at('GET', '/price/api/v1/quotes/latest?ids=1001'));
      expect(fresh.items.map((i: any) => i.token_id)).to.deep.equal([1001]);
      nowMs = Date.now() + 600_000 + 60_000;
      expect(expectOk(await at('GET', '/price/api/v1/quotes/latest?ids=1001')).items).to.deep.equal([]);
      expect(expectOk(await at('POST', '/price/api/v1/quotes/batch', { body: { token_addrs: [{ chain_type: 'utxo', token_address: 'BTC' }] } })).items).to.deep.equal([]);
    });

    it('converts and lists through fiat rates only while they are fresh; each served value carries its source time', async () => {
      nowMs = Date.now();
      const eur = expectOk(await at('GET', '/price/api/v1/quotes/latest?ids=1001&fiat=EUR'));
      expect(eur.items.map((i: any) => [i.token_id, i.fiat_code])).to.deep.equal([[1001, 'EUR']]);
      // The simulator stamps its answers with the time of its latest move (every second); the ingester polls every 300 ms.
      expect(nowMs - Date.parse(eur.items[0].last_updated), 'the quote source time').to.be.within(0, 10_000);
      const rates = expectOk(await at('GET', '/price/api/v1/fiats/rates/USD'));
      expect(rates.items.find((i: any) => i.target_fiat_code === 'EUR')?.rate).to.equal(rateString(EUR_PER_USD));
      for (const item of rates.items) expect(nowMs - Date.parse(item.last_updated), `${item.target_fiat_code} rates' source time`).to.be.within(0, 10_000);

      // A minute past the rates' maximum age: their source time is at most now, the quotes' too (well within 600 s).
      nowMs = Date.now() + RATES_MAX_AGE_MS + 60_000;
      const usd = expectOk(await at('GET', '/price/api/v1/quotes/latest?ids=1001'));
      expect(usd.items.map((i: any) => [i.token_id, i.fiat_code]), 'USD needs no rate').to.deep.equal([[1001, 'USD']]);
      for (const [method, path, body] of [
        ['GET', '/price/api/v1/quotes/latest?ids=1001&fiat=EUR', undefined],
        ['POST', '/price/api/v1/quotes/batch', { token_addrs: [{ chain_type: 'utxo', token_address: 'BTC' }], fiat: 'EUR' }],
      ] as const) {
        const r = await at(method, path, body ? { body } : {});
        expect(r.status, path).to.equal(503);
        expect(r.body).to.deep.equal({ code: 503, msg: `no fresh exchange rate for EUR: the rates are older than ${RATES_MAX_AGE_MS} ms`, data: '' });
      }
      expect(expectOk(await at('GET', '/price/api/v1/fiats/rates/USD')), 'stale rates are no rate data').to.deep.equal({ total: 0, items: [] });
      expect(expectOk(await at('GET', '/price/api/v1/fiats/rates/EUR'))).to.deep.equal({ total: 0, items: [] });
    });
  });

  describe('staleness', () => {
    it('makes the ingester unready and flags it in metrics while the quotes source is down, and recovers', async function () {
      this.timeout(40_000);
      expect(await metricValue(ingester.opsBase, 'chainpipe_price_source_stale', { source: 'quotes' })).to.equal(0);
      await simControl(sim.base, 'PUT', '/sim/faults/cmc', { kind: 'http500' });
      try {
        await waitFor(async () => (await fetch(`${ingester.opsBase}/readyz`)).status === 503, { timeoutMs: 15_000, what: 'ingester unready' });
        expect(await metricValue(ingester.opsBase, 'chainpipe_price_source_stale', { source: 'quotes' })).to.equal(1);
        expect(await metricValue(ingester.opsBase, 'chainpipe_price_source_age_seconds', { source: 'quotes' })).to.be.above(3);
        expect(await metricValue(ingester.opsBase, 'chainpipe_price_source_polls_total', { source: 'quotes', outcome: 'failed' })).to.be.above(0);
      } finally {
        await simControl(sim.base, 'DELETE', '/sim/faults/cmc');
      }
      await waitFor(async () => (await fetch(`${ingester.opsBase}/readyz`)).status === 200, { timeoutMs: 15_000, what: 'ingester ready again' });
    });
  });
});
