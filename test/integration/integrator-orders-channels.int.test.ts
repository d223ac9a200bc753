import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { mnemonicToAccount } from 'viem/accounts';
import { TOPICS } from '@chainpipe/contracts';
import { ACCOUNT_PATHS, MnemonicSigner, addressOfPublicKey, rootOfMnemonic } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';

import { OrderRepository } from '@chainpipe/order-store';
import { QuoteStore } from '@chainpipe/price-store';
import { nativeDepositPush } from './order-fixtures';
import { createRedis, type Redis } from '@chainpipe/redis';
import {
  TEST_KEY_MNEMONIC, createIntegratorWithKey, simChain,
  createRegistryTopics, freePort, produceJson, responseCheck, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type ResponseCheck, type RunningProcess,
} from '@chainpipe/testing';

/**
 * Order creation through the real channels: the aggregator-gateway and order-tracker processes
 * with the ChangeNOW and THORChain adapters against the upstream simulator's stand-ins. Prices are
 * pinned in the simulator (ETH 2000 USD, BTC 50000 USD), so the test computes the estimates
 * itself: 0.1 ETH = 200 USD = 0.004 BTC, less the stand-in's 0.5 % provider fee = 398000 sat,
 * less the channel's 0.3 % = 396806 sat.
 */
const ETH = 101;
const USDT = 102; // on Ethereum, 6 decimals
const BTC = 1001;
const SOL = 801; // 9 decimals, external id 5426
const USDC_SOLANA = 802; // SPL mint EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v
const WSOL = 804; // SPL mint So11111111111111111111111111111111111111112
const AMOUNT = 100_000_000_000_000_000n; // 0.1 ETH
const PROVIDER_OUT = 398_000n;
const NET_OUT = (PROVIDER_OUT * (AMOUNT - (AMOUNT * 3n) / 1000n)) / AMOUNT; // 396806

/**
 * The EVM deposit address of index `i` as the signer side sees it: derived from the test kit's
 * mnemonic along the full private path, where the gateway has only the account's public key.
 */
/**
 * The signing service's keys: another mnemonic than the test kit's (whose Solana keys the test
 * processes could derive), so a Solana deposit address can only have come from the service.
 */
const SIGNER_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const SIGNER_TOKEN = 'channels-signer-token';

/** A wallet of the simulated chain that pays deposits (funded by the simulator's genesis allocation). */
const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 11 });

const signerSideEvmAddress = (index: number) => addressOfPublicKey('evm', rootOfMnemonic(TEST_KEY_MNEMONIC).derive(`${ACCOUNT_PATHS.evm}/0/${index}`).publicKey!);

describe('integrator orders through the ChangeNOW and THORChain channels (gateway, tracker, upstream-sim processes)', function () {
  this.timeout(180_000);
  const env = testEnv();
  const procs: RunningProcess[] = [];
  const redisPrefix = `chan-${randomBytes(3).toString('hex')}:`;
  let db: Knex;
  let redis: Redis;
  let sim = '';
  let gateway = '';
  let check: ResponseCheck;
  let key = '';
  let integratorId = '';
  let topicPrefix = '';
  const depositAppId = `deposits-${randomBytes(3).toString('hex')}`;
  const chain = simChain(() => sim);

  const start = async (entry: string, extra: Record<string, string>, port?: number) => {
    const ops = await freePort();
    const p = spawnTs(entry, { ...extra, OPS_PORT: String(ops), ...(port ? { PORT: String(port) } : {}), LOG_LEVEL: 'warn' });
    procs.push(p);
    await waitReady(p, ops, 60_000);
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: redisPrefix });
    const prefix = (topicPrefix = uniquePrefix('chan'));
    await createRegistryTopics(prefix);
    const [simPort, gwPort] = await Promise.all([freePort(), freePort()]);
    sim = `http://127.0.0.1:${simPort}`;
    gateway = `http://127.0.0.1:${gwPort}`;
    await start('apps/upstream-sim/src/main.ts', { SIM_SIGNER_MNEMONIC: SIGNER_MNEMONIC, SIM_SIGNER_TOKEN: SIGNER_TOKEN, SIM_BLOCK_MS: '300', SIM_FUNDED_ACCOUNTS: payer.address }, simPort);
    for (const [id, price] of [['1027', 2000], ['1', 50000], ['825', 1], ['5426', 100]] as const) {
      const res = await fetch(`${sim}/sim/cmc/quotes/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ price }) });
      expect(res.status).to.equal(200);
    }
    // the price service's latest ETH price, as price-writer keeps it (for the minimum amount)
    await new QuoteStore(redis).writeLatest([
      { kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: Date.now(), fetched_at: Date.now(), usd: { price: 2000 } } as never,
      { kind: 'crypto', source: 'test', external_id: '825', symbol: 'USDT', name: 'Tether', as_of: Date.now(), fetched_at: Date.now(), usd: { price: 1 } } as never,
      { kind: 'crypto', source: 'test', external_id: '5426', symbol: 'SOL', name: 'Solana', as_of: Date.now(), fetched_at: Date.now(), usd: { price: 100 } } as never,
    ]);
    const common = {
      KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: redisPrefix,
      CHANGENOW_API_URL: `${sim}/changenow`, THORNODE_API_URL: `${sim}/thornode`, ORDER_DEPOSIT_APP_ID: depositAppId,
    };
    await Promise.all([
      // the gateway asks the signing service for Solana addresses and holds no key: no mnemonic
      start('apps/aggregator-gateway/src/main.ts', { ...common, DEPOSIT_SIGNER_URL: `${sim}/signer`, DEPOSIT_SIGNER_TOKEN: SIGNER_TOKEN, DEV_SIGNER_MNEMONIC: '' }, gwPort),
      start('apps/order-tracker/src/main.ts', { ...common, CHAIN_RPC_DEFAULT_BASE: `${sim}/rpc`, ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_INTERVAL_MS: '300', ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000' }),
    ]);
    check = responseCheck((await (await fetch(`${gateway}/openapi.json`)).json()) as Parameters<typeof responseCheck>[0]);

    ({ id: integratorId, key } = await createIntegratorWithKey(db, { name: 'Channel test', feeRateBp: 25 }));
  });

  after(async () => {
    for (const p of procs.reverse()) expect(await stopProcess(p), 'clean exit').to.equal(0);
    await redis?.quit();
    await db?.destroy();
  });

  const body = (over: Record<string, unknown> = {}) => ({
    src_token_id: ETH,
    dst_token_id: BTC,
    amount_in: AMOUNT.toString(),
    dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    chosen_channel_id: 1,
    slippage: 0.01,
    main_channel_estimated_out_amount: NET_OUT.toString(),
    min_acceptable_out_amount: ((NET_OUT * 99n) / 100n).toString(),
    channels: [{ channel_id: 1, estimated_out_str: NET_OUT.toString() }],
    ...over,
  });
  const create = async (b: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${gateway}/api/v1/integrator/orders`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(b) });
    const json = (await res.json()) as { code: number; msg: string; data: Record<string, unknown> | null };
    expect(check('POST', '/api/v1/integrator/orders', res.status, res.headers.get('content-type'), json)).to.equal(undefined);
    return { status: res.status, body: json };
  };
  const exchanges = async (): Promise<{ id: string; payoutAddress: string; payinAddress: string; refundAddress: string | null }[]> => (await fetch(`${sim}/sim/changenow/exchanges`)).json() as never;

  it('creates an order with its own platform deposit address, the channel\'s as the forward target, and the fee, rate and price snapshots of the key', async () => {
    const before = Date.now();
    const a = await create(body(), { 'x-integrator-api-key': key });
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    const d = a.body.data!;
    // 0.3 % of 0.1 ETH for the platform, 0.25 % on top for the integrator
    expect(d).to.include({
      fee_platform: '300000000000000', fee_partner: '0', fee_integrator: '250000000000000', fee_platform_original: '550000000000000',
      platform_fee_rate: '0.0030', partner_fee_rate: '0.0000', integrator_fee_rate: '0.0025',
      // a plain transfer to the platform's address: no memo, no router
      deposit_memo: null,
      deposit_router: null,
    });
    const stored = (await new OrderRepository(db).findByNo(String(d.order_no)))!;
    expect(stored.deposit_index).to.be.a('number');
    expect(d.deposit_address, 'the platform\'s address of the order\'s index').to.equal(signerSideEvmAddress(stored.deposit_index!));
    const exchange = (await exchanges()).find((e) => e.payinAddress === stored.forward_address);
    expect(exchange, 'the platform forwards to the ChangeNOW payin address').to.not.equal(undefined);
    expect(exchange!.payinAddress).to.not.equal(d.deposit_address);
    const expireAt = Date.parse(String(d.expire_at));
    expect(expireAt - before).to.be.within(29 * 60_000, 31 * 60_000);
    const order = (await new OrderRepository(db).findByNo(String(d.order_no)))!;
    expect(order).to.include({ integrator_id: integratorId, state: 'Depositing', provider_order_id: exchange!.id, channel_kind: 'changenow', src_price_usd: '2000' });
    // the commission's share leaves the estimate: 396806 × (1 − 0.0025) = 395814
    expect(order.estimated_out).to.equal(((NET_OUT * (AMOUNT - (AMOUNT * 25n) / 10000n)) / AMOUNT).toString());
    const monitored = await db('tx.monitored_addresses').where({ chain_type: 'ethereum', address: String(d.deposit_address).toLowerCase() }).first();
    expect(monitored, 'deposit address monitored').to.not.equal(undefined);
  });

  it('Solana: two orders of the same amount get their own deposit addresses from the signing service, monitored on solana', async () => {
    // 2 SOL at 100 USD = 200 USD: the same estimate as 0.1 ETH at 2000 USD
    const sol = (clientOrderId: string) => body({ src_token_id: SOL, amount_in: '2000000000', client_order_id: clientOrderId });
    const [a, b] = [await create(sol(`sol-a-${randomBytes(3).toString('hex')}`)), await create(sol(`sol-b-${randomBytes(3).toString('hex')}`))];
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    const [oa, ob] = [(await new OrderRepository(db).findByNo(String(a.body.data!.order_no)))!, (await new OrderRepository(db).findByNo(String(b.body.data!.order_no)))!];
    expect(oa.deposit_index).to.not.equal(ob.deposit_index);
    expect(oa.deposit_address).to.not.equal(ob.deposit_address);
    // each the address of the service's key of the order's index (m/44'/501'/index'/0' of its mnemonic)
    const service = new MnemonicSigner(SIGNER_MNEMONIC);
    expect(oa.deposit_address).to.equal(await service.addressAt('svm', oa.deposit_index!));
    expect(ob.deposit_address).to.equal(await service.addressAt('svm', ob.deposit_index!));
    expect(oa.deposit_address).to.not.equal(await new MnemonicSigner(TEST_KEY_MNEMONIC).addressAt('svm', oa.deposit_index!));
    expect(oa).to.include({ deposit_chain_type: 'solana', channel_kind: 'changenow', deposit_memo: null, deposit_router: null });
    const exchange = (await exchanges()).find((e) => e.payinAddress === oa.forward_address);
    expect(exchange, 'forwarded to the ChangeNOW payin address').to.not.equal(undefined);
    expect(exchange!.refundAddress, 'the provider refunds to the platform address').to.equal(oa.deposit_address);
    const monitored = await db('tx.monitored_addresses').where({ chain_type: 'solana', address: oa.deposit_address }).first();
    expect(monitored, 'deposit address monitored').to.not.equal(undefined);
  });

  it('Solana: an order whose fees would stay at the deposit address under the rent-exempt minimum after the forward is amount_in below minimum, before any address or exchange', async () => {
    // 0.2 SOL = 20 USD, above the 10 USD minimum; without a key the fees are the channel's 0.3 %:
    // 600 000 lamports, less the forward's 5000-lamport fee, under 890 880
    const exchangesBefore = (await exchanges()).length;
    const small = await create(body({ src_token_id: SOL, amount_in: '200000000', main_channel_estimated_out_amount: (NET_OUT / 10n).toString(), min_acceptable_out_amount: ((NET_OUT * 99n) / 1000n).toString(), channels: [{ channel_id: 1, estimated_out_str: (NET_OUT / 10n).toString() }] }));
    expect(small).to.deep.equal({ status: 400, body: { code: 400, msg: 'amount_in below minimum', data: null } });
    expect((await exchanges()).length, 'no exchange at the provider').to.equal(exchangesBefore);
  });

  it('Solana: an SPL token source (USDC, wrapped SOL) is token not found, before any price, address or exchange: the platform could never forward it', async () => {
    // both are in the reference (an unknown id would be token not found too): Solana mints, not native
    const mints = await db('price.tokens as t').join('price.chains as c', 'c.id', 't.chain_id').whereIn('t.id', [USDC_SOLANA, WSOL]).orderBy('t.id').select('t.contract_address', 't.is_native', 'c.chain_type');
    expect(mints).to.deep.equal([
      { contract_address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', is_native: false, chain_type: 'svm' },
      { contract_address: 'So11111111111111111111111111111111111111112', is_native: false, chain_type: 'svm' },
    ]);
    const exchangesBefore = (await exchanges()).length;
    const deposits = await db('agg.orders').where({ deposit_chain_type: 'solana' }).count<{ count: string }[]>('* as count');
    // USDC (6 decimals) and wSOL, both Solana mints of the price reference; no price is stored for either
    for (const [tokenId, amountIn] of [[USDC_SOLANA, '200000000'], [WSOL, '2000000000']] as const) {
      const refused = await create(body({ src_token_id: tokenId, amount_in: amountIn }));
      expect(refused, `token ${tokenId}`).to.deep.equal({ status: 400, body: { code: 400, msg: 'token not found', data: null } });
    }
    expect((await exchanges()).length, 'no exchange at the provider').to.equal(exchangesBefore);
    expect(await db('agg.orders').where({ deposit_chain_type: 'solana' }).count<{ count: string }[]>('* as count'), 'no order').to.deep.equal(deposits);
  });

  it('Solana while the signing service is down: 503, no order and no exchange at the provider; the next order gets its address again', async () => {
    const outage = (down: boolean) => fetch(`${sim}/sim/signer/outage`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ down }) });
    const clientOrderId = `sol-down-${randomBytes(3).toString('hex')}`;
    const sol = body({ src_token_id: SOL, amount_in: '2000000000', client_order_id: clientOrderId });
    const exchangesBefore = (await exchanges()).length;
    expect((await outage(true)).status).to.equal(200);
    try {
      const refused = await create(sol);
      expect(refused).to.deep.equal({ status: 503, body: { code: 503, msg: 'deposit address unavailable, retry later', data: null } });
      expect(await new OrderRepository(db).findByClientOrderId(null, clientOrderId)).to.equal(undefined);
      expect((await exchanges()).length, 'no exchange at the provider').to.equal(exchangesBefore);
    } finally {
      await outage(false);
    }
    expect((await create(sol)).status).to.equal(200);
  });

  it('without a key: a normal order without commission', async () => {
    const a = await create(body());
    expect(a.status).to.equal(200);
    expect(a.body.data).to.include({ fee_integrator: '0', fee_platform: '300000000000000', fee_platform_original: '300000000000000', integrator_fee_rate: '0.0000' });
    expect((await new OrderRepository(db).findByNo(String(a.body.data!.order_no)))!.integrator_id).to.equal(null);
  });

  it('quote amount mismatch beyond 1 %, channel not found', async () => {
    const high = (NET_OUT * 102n) / 100n;
    expect((await create(body({ main_channel_estimated_out_amount: high.toString(), min_acceptable_out_amount: high.toString() }))).body).to.deep.equal({ code: 400, msg: 'quote amount mismatch', data: null });
    const within = (NET_OUT * 1005n) / 1000n;
    expect((await create(body({ main_channel_estimated_out_amount: within.toString(), min_acceptable_out_amount: ((within * 99n) / 100n).toString() }))).status, 'within 1 %').to.equal(200);
    expect((await create(body({ chosen_channel_id: 99, channels: [{ channel_id: 99, estimated_out_str: NET_OUT.toString() }] }))).body).to.deep.equal({ code: 400, msg: 'channel not found', data: null });
  });

  it('client_order_id: concurrent repeats give one order and one channel exchange; other terms are a duplicate', async () => {
    const clientOrderId = `c-${randomBytes(4).toString('hex')}`;
    const payout = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(body({ client_order_id: clientOrderId, dst_address: payout }), { 'x-integrator-api-key': key })));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.data!.order_no)).size).to.equal(1);
    expect((await exchanges()).filter((e) => e.payoutAddress === payout)).to.have.length(1);
    const other = await create(body({ client_order_id: clientOrderId, dst_address: payout, amount_in: (AMOUNT + 1n).toString() }), { 'x-integrator-api-key': key });
    expect(other.body).to.deep.equal({ code: 400, msg: 'duplicate client_order_id', data: null });
    // the same id without a key is another integrator's space
    expect((await create(body({ client_order_id: clientOrderId, dst_address: payout }))).body.data!.order_no).to.not.equal(answers[0].body.data!.order_no);
  });

  it('client_order_id: a retry with a refreshed quote returns the same order before any re-quote, price or minimum check; other identity terms are a duplicate', async () => {
    const clientOrderId = `r-${randomBytes(4).toString('hex')}`;
    const headers = { 'x-integrator-api-key': key };
    const first = await create(body({ client_order_id: clientOrderId }), headers);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const exchangeCount = (await exchanges()).length;
    const latestEth = (price: number) =>
      new QuoteStore(redis).writeLatest([{ kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: Date.now(), fetched_at: Date.now(), usd: { price } } as never]);
    // the source price falls to 1 USD: 0.1 ETH is under the 10 USD minimum for any new order
    await latestEth(1);
    try {
      // a refreshed quote 3 % above the first one: a re-quote would call it a mismatch
      const refreshed = (NET_OUT * 103n) / 100n;
      const retry = await create(
        body({ client_order_id: clientOrderId, main_channel_estimated_out_amount: refreshed.toString(), min_acceptable_out_amount: ((refreshed * 99n) / 100n).toString(), channels: [{ channel_id: 1, estimated_out_str: refreshed.toString() }] }),
        headers,
      );
      expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
      expect(retry.body.data).to.include({ order_no: first.body.data!.order_no, deposit_address: first.body.data!.deposit_address });
      expect((await exchanges()).length, 'no new exchange at the provider').to.equal(exchangeCount);
      // what the repeat skipped: a new order under the same figures is refused
      expect((await create(body({ client_order_id: `${clientOrderId}-new` }), headers)).body).to.deep.equal({ code: 400, msg: 'amount_in below minimum', data: null });
      const duplicate = { code: 400, msg: 'duplicate client_order_id', data: null };
      expect((await create(body({ client_order_id: clientOrderId, dst_address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' }), headers)).body, 'another dst_address').to.deep.equal(duplicate);
      expect((await create(body({ client_order_id: clientOrderId, chosen_channel_id: 2, channels: [{ channel_id: 2, estimated_out_str: NET_OUT.toString() }] }), headers)).body, 'another channel').to.deep.equal(duplicate);
      expect((await create(body({ client_order_id: clientOrderId, dst_token_id: ETH, dst_address: '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706' }), headers)).body, 'another destination token').to.deep.equal(duplicate);
    } finally {
      await latestEth(2000);
    }
  });

  /** The quote stream's events (prompt providers: the stream ends by itself). */
  const quoteEvents = async (query: string, headers: Record<string, string> = {}): Promise<{ event: string; data: Record<string, unknown> }[]> => {
    const res = await fetch(`${gateway}/api/v2/quote/stream?${query}`, { headers: { accept: 'text/event-stream', ...headers } });
    expect(res.status).to.equal(200);
    return [...(await res.text()).matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => ({ event: m[1], data: JSON.parse(m[2]) as Record<string, unknown> }));
  };

  it('provider minimums: an error event for the channel in the quote stream, amount_in below minimum at creation', async () => {
    // The stand-ins' minimums at the pinned prices: THORChain's recommended_min_amount_in four times
    // the larger outbound fee, Bitcoin's 15 000 sat = 0.00375 ETH, so 0.015 ETH (30 USD; refused
    // outright under a quarter of it); ChangeNOW's range 15 USD (0.0075 ETH); the platform's 10 USD.
    const belowMinimum = (channel: number) => ({ event: 'error', data: { channel_id: channel, msg: 'amount_in below minimum' } });
    for (const amount of [6_000_000_000_000_000n, 1_000_000_000_000_000n]) {
      const events = await quoteEvents(`src_token_id=${ETH}&dst_token_id=${BTC}&amount_in=${amount}&slippage=0.01`);
      expect(events.slice(0, 2), `${amount}`).to.have.deep.members([belowMinimum(1), belowMinimum(2)]);
      expect(events.slice(2)).to.deep.equal([{ event: 'done', data: {} }]);
    }
    // 0.01 ETH (20 USD): above ChangeNOW's minimum, below THORChain's
    const between = 10_000_000_000_000_000n;
    const events = await quoteEvents(`src_token_id=${ETH}&dst_token_id=${BTC}&amount_in=${between}&slippage=0.01`);
    expect(events.find((e) => e.data.channel_id === 2)).to.deep.equal(belowMinimum(2));
    const changenow = events.find((e) => e.event === 'channel' && e.data.channel_id === 1);
    expect(changenow, JSON.stringify(events)).to.not.equal(undefined);
    const estimate = BigInt(String(changenow!.data.estimated_out_str));

    const order = (amount: bigint, channel: number, out: bigint) =>
      body({ amount_in: amount.toString(), chosen_channel_id: channel, main_channel_estimated_out_amount: out.toString(), min_acceptable_out_amount: ((out * 99n) / 100n).toString(), channels: [{ channel_id: channel, estimated_out_str: out.toString() }] });
    const refused = { code: 400, msg: 'amount_in below minimum', data: null };
    const exchangeCount = (await exchanges()).length;
    // 0.006 ETH is 12 USD, above the platform's minimum: the providers refuse it
    expect((await create(order(6_000_000_000_000_000n, 1, 23_800n))).body, 'ChangeNOW').to.deep.equal(refused);
    expect((await create(order(6_000_000_000_000_000n, 2, 23_800n))).body, 'THORChain').to.deep.equal(refused);
    expect((await create(order(between, 2, estimate))).body, 'THORChain at 20 USD').to.deep.equal(refused);
    expect((await exchanges()).length, 'no exchange for a refused amount').to.equal(exchangeCount);
    const accepted = await create(order(between, 1, estimate));
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
  });

  it('a 1 % key and 0.5 % slippage: quoted without the key the minimum is above what the order can get, refused at creation before any exchange; quoted with the key the stream shows the estimate after commission and the order is created reaching its minimum', async () => {
    const { key: onePercent } = await createIntegratorWithKey(db, { name: 'One percent', feeRateBp: 100 });
    const query = `src_token_id=${ETH}&dst_token_id=${BTC}&amount_in=${AMOUNT}&slippage=0.005&channel_id=1`;
    const estimateOf = (events: { event: string; data: Record<string, unknown> }[]) => BigInt(String(events.find((e) => e.event === 'channel')!.data.estimated_out_str));
    // the stream needs no key: without one, the channel's estimate before any commission
    const plain = estimateOf(await quoteEvents(query));
    expect(plain).to.equal(NET_OUT);
    const noKeyMin = (plain * 995n) / 1000n; // 394821
    const afterCommission = (NET_OUT * 99n) / 100n; // 392837: what the forward's quote of amount − fees − commission gives
    expect(noKeyMin > afterCommission, 'the minimum of the plain quote is out of the order\'s reach').to.equal(true);
    const exchangeCount = (await exchanges()).length;
    const refused = await create(body({ slippage: 0.005, main_channel_estimated_out_amount: plain.toString(), min_acceptable_out_amount: noKeyMin.toString() }), { 'x-integrator-api-key': onePercent });
    expect(refused.body).to.deep.equal({ code: 400, msg: 'min_acceptable_out_amount above the estimate after commission', data: null });
    expect((await exchanges()).length, 'no exchange for a refused order').to.equal(exchangeCount);
    // an unknown key on the stream is ignored; the integrator's own key gives the estimate after its commission
    expect(estimateOf(await quoteEvents(query, { 'x-integrator-api-key': 'cpk_0_nope' }))).to.equal(NET_OUT);
    const keyed = estimateOf(await quoteEvents(query, { 'x-integrator-api-key': onePercent }));
    expect(keyed).to.equal(afterCommission);
    const min = (keyed * 995n) / 1000n;
    const created = await create(body({ slippage: 0.005, main_channel_estimated_out_amount: keyed.toString(), min_acceptable_out_amount: min.toString(), channels: [{ channel_id: 1, estimated_out_str: keyed.toString() }] }), { 'x-integrator-api-key': onePercent });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body.data).to.include({ fee_integrator: (AMOUNT / 100n).toString(), integrator_fee_rate: '0.0100' });
    const order = (await new OrderRepository(db).findByNo(String(created.body.data!.order_no)))!;
    expect(order.estimated_out).to.equal(afterCommission.toString());
    expect(BigInt(order.min_acceptable_out) <= BigInt(order.estimated_out), 'the order reaches its minimum at its own quote').to.equal(true);
  });

  it('an ERC-20 source on THORChain: the order keeps the quote\'s vault, memo and router as its forward; the user pays the platform\'s address', async () => {
    const amount = 100_000_000n; // 100 USDT
    const events = await quoteEvents(`src_token_id=${USDT}&dst_token_id=${BTC}&amount_in=${amount}&slippage=0.01&channel_id=2`);
    const quote = events.find((e) => e.event === 'channel');
    expect(quote, JSON.stringify(events)).to.not.equal(undefined);
    const out = BigInt(String(quote!.data.estimated_out_str));
    const a = await create(
      body({ src_token_id: USDT, amount_in: amount.toString(), chosen_channel_id: 2, main_channel_estimated_out_amount: out.toString(), min_acceptable_out_amount: ((out * 99n) / 100n).toString(), channels: [{ channel_id: 2, estimated_out_str: out.toString() }] }),
    );
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    // what THORNode answers for this asset: the Ethereum vault and router of this simulator run
    const thornode = (await (await fetch(`${sim}/thornode/thorchain/quote/swap?from_asset=ETH.USDT-0XDAC17F958D2EE523A2206206994597C13D831EC7&to_asset=BTC.BTC&amount=10000000000`)).json()) as { inbound_address: string; router: string };
    expect(thornode.router).to.match(/^0x[0-9a-f]{40}$/);
    const order = (await new OrderRepository(db).findByNo(String(a.body.data!.order_no)))!;
    expect(order.forward_address!.toLowerCase()).to.equal(thornode.inbound_address.toLowerCase());
    expect(order.forward_router).to.equal(thornode.router);
    expect(order.forward_memo).to.equal(`=:BTC.BTC:${order.dst_address}`);
    expect(a.body.data).to.include({ deposit_address: signerSideEvmAddress(order.deposit_index!), deposit_memo: null, deposit_router: null });
  });

  it('two concurrent orders of the same amount on each channel get their own deposit addresses, and a deposit moves only its own order', async () => {
    const events = await quoteEvents(`src_token_id=${ETH}&dst_token_id=${BTC}&amount_in=${AMOUNT}&slippage=0.01&channel_id=2`);
    const thorOut = BigInt(String(events.find((e) => e.event === 'channel')!.data.estimated_out_str));
    const thorBody = body({ chosen_channel_id: 2, main_channel_estimated_out_amount: thorOut.toString(), min_acceptable_out_amount: ((thorOut * 99n) / 100n).toString(), channels: [{ channel_id: 2, estimated_out_str: thorOut.toString() }] });
    const answers = await Promise.all([body(), body(), thorBody, thorBody].map((b) => create(b, { 'x-integrator-api-key': key })));
    expect(answers.map((a) => a.status), JSON.stringify(answers.map((a) => a.body))).to.deep.equal([200, 200, 200, 200]);
    const repo = new OrderRepository(db);
    const [cnOlder, cnNewer, thorOlder, thorNewer] = await Promise.all(answers.map(async (a) => (await repo.findByNo(String(a.body.data!.order_no)))!));
    const all = [cnOlder, cnNewer, thorOlder, thorNewer];
    expect(new Set(all.map((o) => o.deposit_address)).size, 'four deposit addresses').to.equal(4);
    for (const o of all) expect(o.deposit_address).to.equal(signerSideEvmAddress(o.deposit_index!));
    // THORChain's vault is one address for everyone: where the platform forwards, never where a user pays
    expect(thorOlder.forward_address).to.equal(thorNewer.forward_address);
    for (const o of all) {
      await waitFor(async () => (await db('tx.monitored_addresses').where({ app_id: depositAppId, chain_type: 'ethereum', address: o.deposit_address }).first()) !== undefined, { what: 'deposit address monitored' });
    }

    // the newer order of each channel is paid on the chain, and tx-matcher reports the transaction to the monitored address
    const paidHashes = [await chain.pay(payer, cnNewer.deposit_address, AMOUNT), await chain.pay(payer, thorNewer.deposit_address, AMOUNT)];
    const pushes = [cnNewer, thorNewer].map((o, i) => nativeDepositPush(depositAppId, o.deposit_address, AMOUNT.toString(), { hash: paidHashes[i] }));
    await produceJson(`${topicPrefix}${TOPICS.txPush.name}`, pushes.map((p) => ({ key: p.listen_address[0], value: p })));
    for (const [o, p] of [[cnNewer, pushes[0]], [thorNewer, pushes[1]]] as const) {
      const paid = await waitFor(async () => {
        const r = await repo.findById(o.id);
        return r?.state === 'Exchanging' ? r : undefined;
      }, { timeoutMs: 30_000, what: `order ${o.order_no} paid` });
      expect(paid).to.include({ deposit_tx_hash: p.tx.tx_hash, deposit_amount: AMOUNT.toString() });
    }
    for (const o of [cnOlder, thorOlder]) {
      expect(await repo.findById(o.id), 'the older order of the same amount stays unpaid').to.include({ state: 'Depositing', deposit_tx_hash: null, version: o.version });
    }
  });

  it('the tracker follows the channel: finished → Completed → Settled with the commission in the ledger at the creation price', async () => {
    const a = await create(body(), { 'x-integrator-api-key': key });
    const orders = new OrderRepository(db);
    const order = (await orders.findByNo(String(a.body.data!.order_no)))!;
    // the deposit arrived (its path through the chain pipeline has a test of its own)
    await db('agg.orders').where({ id: order.id }).update({ state: 'Exchanging', deposit_amount: order.amount_in, deposit_tx_hash: '0x' + 'd'.repeat(64) });
    const payoutHash = randomBytes(32).toString('hex');
    const moved = await fetch(`${sim}/sim/changenow/exchanges/${order.provider_order_id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'finished', payoutHash }) });
    expect(moved.status).to.equal(200);
    const settled = await waitFor(async () => {
      const o = await orders.findById(order.id);
      return o?.state === 'Settled' ? o : undefined;
    }, { timeoutMs: 30_000, what: 'order settled' });
    expect(settled).to.include({ payout_tx_hash: payoutHash });
    expect((await orders.audit(order.id)).map((r) => r.to_state)).to.deep.equal(['Depositing', 'Completed', 'Settled']);
    const line = (await orders.ledgerOf(order.id))!;
    // 0.00025 ETH at 2000 USD = 0.5 USD
    expect(line).to.include({ integrator_id: integratorId, token_id: ETH, amount: '250000000000000', state: 'Available' });
    expect(Number(line.amount_usd)).to.equal(0.5);
  });

  it('a failed swap waits for a refund address; the refund request records it; a channel refund returns the principal to the platform\'s address, not to the user', async () => {
    const a = await create(body(), { 'x-integrator-api-key': key });
    const orders = new OrderRepository(db);
    const order = (await orders.findByNo(String(a.body.data!.order_no)))!;
    await db('agg.orders').where({ id: order.id }).update({ state: 'Exchanging', deposit_amount: order.amount_in, deposit_tx_hash: '0x' + 'e'.repeat(64) });
    const put = (status: string, extra: Record<string, string> = {}) =>
      fetch(`${sim}/sim/changenow/exchanges/${order.provider_order_id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status, ...extra }) });
    expect((await put('failed')).status).to.equal(200);
    await waitFor(async () => (await orders.findById(order.id))?.state === 'RefundAddressPending', { timeoutMs: 30_000, what: 'waiting for a refund address' });
    const refund = await fetch(`${gateway}/api/v1/integrator/orders/${order.order_no}/request_refund`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-integrator-api-key': key }, body: JSON.stringify({ refund_address: '0x' + '2'.repeat(40) }),
    });
    expect(await refund.json()).to.deep.equal({ code: 0, msg: 'ok', data: 'ok' });
    // ChangeNOW refunds to the refund address the exchange was created with: the order's own
    // deposit address, so the principal is back with the platform, which sends the refund itself
    expect((await exchanges()).find((e) => e.id === order.provider_order_id)).to.include({ refundAddress: order.deposit_address });
    expect((await put('refunded', { refundHash: 'ab'.repeat(32) })).status).to.equal(200);
    // the tracker records the channel's refund once, in place (provider_outcome), and moves nothing
    await waitFor(async () => ((await orders.findById(order.id))?.execution as Record<string, unknown> | null)?.provider_outcome === 'Refunded', { timeoutMs: 30_000, what: "the channel's refund read by the tracker" });
    const after = (await orders.findById(order.id))!;
    expect(after, 'a channel refund to the platform does not make the order Refunded').to.include({ state: 'RefundAddressPending', refund_address: '0x' + '2'.repeat(40) });
    expect(await orders.ledgerOf(order.id), 'no commission for a failed swap').to.equal(undefined);
  });
});
