import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { createHttpApp, finishHttpApp, listen, msgEnvelope, serveApiDocs, type StartedServer } from '@chainpipe/http';
import { IntegratorRepository, OrderDepositRepository, OrderRepository, type NewOrder, type OrderRow } from '@chainpipe/order-store';
import { QuoteStore } from '@chainpipe/price-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, loadConfig } from '@chainpipe/runtime';
import { addIntegratorKey, freePort, responseCheck, spawnTs, stopProcess, testDepositAddresses, testEnv, uniquePrefix, waitReady, type ResponseCheck, type RunningProcess } from '@chainpipe/testing';
import { orderFixture } from './order-fixtures';
import { orderConfig } from '../../apps/aggregator-gateway/src/orders/config';
import { ordersModule } from '../../apps/aggregator-gateway/src/orders/module';

/**
 * The integrator order endpoints on the real Postgres and Redis: every error row of order
 * creation that is decided before a channel is asked, the key fallback, the order read and every
 * row of the refund table with its concurrency. The channel port is a tripwire here (any call
 * fails the request with 500, so a row that wrongly reaches a channel fails its test); creation
 * through the real channel adapters is the subject of the gateway's end-to-end test.
 */
const ETH = 101; // 18 decimals, external id 1027
const BTC = 1001;
const SOL = 801;
const AVAX = 701; // on Avalanche, a chain the address monitoring service does not parse
const EVM_ADDR = '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706';
const BTC_ADDR = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

interface Answer {
  status: number;
  body: { code: number; msg: string; data: unknown };
}

describe('integrator order endpoints (real Postgres and Redis, in process)', function () {
  this.timeout(60_000);
  let db: Knex;
  let redis: Redis;
  let server: StartedServer | undefined;
  let base = '';
  let orders: OrderRepository;
  let integrators: IntegratorRepository;
  let channelCalls = 0;
  let check: ResponseCheck;
  let keyA = '';
  let keyB = '';
  let keyDisabledIntegrator = '';
  let keyDisabled = '';
  let integratorA = '';
  const prefix = `itest:${randomBytes(3).toString('hex')}:`;

  const newKey = (integratorId: string, feeRateBp: number): Promise<string> => addIntegratorKey(db, integratorId, feeRateBp);
  /**
   * The service's clock, ahead of the wall clock by `serviceAheadMs` where a case needs orders
   * expired in the service's eyes only: integration files run two at a time on one database, and
   * another file's order-tracker expires every Depositing order past its expire_at on the wall
   * clock (it moved the concurrent-refund case's order to CancelledNoDeposit under its requests).
   */
  let serviceAheadMs = 0;
  const serviceClock = { now: () => Date.now() + serviceAheadMs };

  before(async () => {
    const env = testEnv();
    db = createDb({ url: env.databaseUrl, poolMax: 10 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: prefix });
    orders = new OrderRepository(db);
    integrators = new IntegratorRepository(db);
    integratorA = await integrators.createIntegrator('A');
    const integratorB = await integrators.createIntegrator('B');
    const integratorOff = await integrators.createIntegrator('Off');
    keyA = await newKey(integratorA, 25);
    keyB = await newKey(integratorB, 100);
    keyDisabledIntegrator = await newKey(integratorOff, 100);
    await integrators.setIntegratorActive(integratorOff, false);
    keyDisabled = await newKey(integratorA, 50);
    await integrators.setKeyEnabled(keyDisabled.split('_')[1], false);
    // ETH at 2500 USD: 0.004 ETH is the 10 USD minimum
    await new QuoteStore(redis).writeLatest([
      { kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: Date.now(), fetched_at: Date.now(), usd: { price: 2500 } } as never,
    ]);

    const logger = createLogger({ name: 'orders-test', level: 'error' });
    const registry = new Registry();
    const app = createHttpApp({ logger, registry, defaultEnvelope: msgEnvelope });
    const tripwire = async (): Promise<never> => {
      channelCalls++;
      throw new Error('a channel was asked although the request should have been refused before');
    };
    const { api } = ordersModule({
      db,
      redis,
      clock: serviceClock,
      contracts: loadContracts(),
      bodyLimitBytes: 1024 * 1024,
      producer: { publish: tripwire },
      channels: { find: tripwire, requote: tripwire, createDeposit: tripwire },
      depositAddresses: testDepositAddresses(),
      config: loadConfig(orderConfig, {}),
      logger,
      registry,
    });
    app.use(api.router);
    // every answer is also checked against the API document the routes produce
    check = responseCheck(serveApiDocs(app, api, { title: 'integrator orders', version: 'test' }) as never);
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.address.port}`;
  });

  after(async () => {
    await server?.close();
    await redis?.quit();
    await db?.destroy();
  });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const answer = { status: res.status, body: (await res.json()) as Answer['body'] };
    expect(check(method, path, answer.status, res.headers.get('content-type'), answer.body), `${method} ${path} against the API document`).to.equal(undefined);
    return answer;
  }

  const validBody = (over: Record<string, unknown> = {}) => ({
    src_token_id: ETH,
    dst_token_id: BTC,
    amount_in: '100000000000000000', // 0.1 ETH = 250 USD
    dst_address: BTC_ADDR,
    chosen_channel_id: 2,
    slippage: 0.01,
    main_channel_estimated_out_amount: '250000',
    min_acceptable_out_amount: '247500',
    channels: [{ channel_id: 1, estimated_out_str: '249000' }, { channel_id: 2, estimated_out_str: '250000' }],
    ...over,
  });

  const create = (body: unknown, headers: Record<string, string> = {}) => call('POST', '/api/v1/integrator/orders', body, headers);
  const expect400 = (a: Answer, msg: string) => {
    expect(a.status, `${msg}: ${JSON.stringify(a.body)}`).to.equal(400);
    expect(a.body).to.deep.equal({ code: 400, msg, data: null });
  };

  describe('POST /api/v1/integrator/orders: error rows before any channel call', () => {
    afterEach(() => expect(channelCalls, 'no channel may be asked for a refused order').to.equal(0));

    it('invalid request body: malformed JSON or not an object', async () => {
      expect400(await create('{"src_token_id": 1,'), 'invalid request body');
      expect400(await create('[1,2]'), 'invalid request body');
    });

    it('required fields, with the spec message for the token ids', async () => {
      const without = (f: string) => {
        const b: Record<string, unknown> = validBody();
        delete b[f];
        return b;
      };
      expect400(await create(without('src_token_id')), 'src_token_id/dst_token_id required');
      expect400(await create(without('dst_token_id')), 'src_token_id/dst_token_id required');
      for (const f of ['amount_in', 'dst_address', 'chosen_channel_id', 'slippage', 'main_channel_estimated_out_amount', 'min_acceptable_out_amount', 'channels']) {
        expect400(await create(without(f)), `${f} required`);
      }
    });

    it('split and risk payloads', async () => {
      expect400(await create(validBody({ split_count: 2 })), 'split orders are not supported for integrator orders');
      expect400(await create(validBody({ is_risk: true })), 'split orders are not supported for integrator orders');
    });

    it('wrong types are refused by the schema with the field named, never a 500', async () => {
      for (const bad of [{ amount_in: 100 }, { amount_in: '-5' }, { amount_in: '1.5' }, { src_token_id: 'abc' }, { channels: [] }, { channels: [{ channel_id: 2 }] }, { slippage: '0.01' }]) {
        const a = await create(validBody(bad));
        expect(a.status, JSON.stringify(bad)).to.equal(400);
        expect(a.body.code).to.equal(400);
      }
    });

    it('slippage out of range, chosen channel not in channels, min_acceptable_out_amount too low', async () => {
      for (const slippage of [0, 1, -0.5, 1.2]) expect400(await create(validBody({ slippage })), 'slippage out of range');
      expect400(await create(validBody({ chosen_channel_id: 3 })), 'chosen_channel_id not in channels');
      // 250000 × 0.99 = 247500
      expect400(await create(validBody({ min_acceptable_out_amount: '247499' })), 'min_acceptable_out_amount too low');
      expect400(await create(validBody({ min_acceptable_out_amount: '0' })), 'min_acceptable_out_amount too low');
    });

    it('token not found, chain not found', async () => {
      expect400(await create(validBody({ src_token_id: 999_999 })), 'token not found');
      expect400(await create(validBody({ dst_token_id: 999_998 })), 'token not found');
      // a token whose chain is switched off
      const [{ id: chainId }] = await db('price.chains').insert({ name: `Off ${randomBytes(3).toString('hex')}`, short_name: 'OFF', chain_id: 999, chain_type: 'evm', is_active: false }).returning('id');
      const [{ id: tokenId }] = await db('price.tokens').insert({ chain_id: chainId, name: 'Off coin', symbol: 'OFF', decimals: 18, is_native: true }).returning('id');
      expect400(await create(validBody({ src_token_id: tokenId })), 'chain not found');
      // a source chain whose deposits cannot be seen
      expect400(await create(validBody({ src_token_id: AVAX })), 'chain not found');
      // Solana without a signing service configured: no deposit address can be had (hardened keys only)
      expect400(await create(validBody({ src_token_id: SOL })), 'chain not found');
    });

    it('dst_address invalid for the destination chain', async () => {
      expect400(await create(validBody({ dst_address: EVM_ADDR })), 'dst_address invalid');
      expect400(await create(validBody({ dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5' })), 'dst_address invalid'); // checksum
      expect400(await create(validBody({ dst_token_id: ETH, src_token_id: BTC, dst_address: BTC_ADDR })), 'dst_address invalid');
    });

    it('amount_in below minimum: under 10 USD at the latest price', async () => {
      expect400(await create(validBody({ amount_in: '3999999999999999' })), 'amount_in below minimum');
    });

    it('key fallback: no, unknown, malformed or disabled keys and disabled integrators never get 401/403', async () => {
      const bodies = [validBody({ slippage: 2 })];
      const variants: Record<string, string>[] = [
        {},
        { 'x-integrator-api-key': 'nonsense' },
        { 'x-integrator-api-key': `cpk_0123456789abcdef_${'A'.repeat(43)}` },
        { 'x-integrator-api-key': keyDisabled },
        { 'x-integrator-api-key': keyDisabledIntegrator },
        { authorization: `ApiKey ${keyDisabledIntegrator}` },
        { 'x-integrator-api-key': keyA.slice(0, -1) + (keyA.endsWith('A') ? 'B' : 'A') },
      ];
      for (const headers of variants) {
        for (const b of bodies) expect400(await create(b, headers), 'slippage out of range');
      }
    });
  });

  describe('GET /api/v1/integrator/orders/{orderNo} and POST …/request_refund', () => {
    // A day ahead: every expire_at below is still to come on the wall clock (see serviceAheadMs).
    before(() => (serviceAheadMs = 24 * 3600_000));
    after(() => (serviceAheadMs = 0));
    const order = (over: Partial<NewOrder> = {}): NewOrder =>
      orderFixture({
        integrator_id: integratorA,
        fee_integrator: '250000000000000',
        fee_platform_original: '550000000000000',
        integrator_fee_rate: '0.0025',
        expire_at: new Date(serviceClock.now() - 60_000), // expired a minute ago
        auto_cancel_at: new Date(serviceClock.now() + 3600_000),
        ...over,
      });
    const refund = (orderNo: string, body: unknown, key: string | null = keyA) =>
      call('POST', `/api/v1/integrator/orders/${orderNo}/request_refund`, body, key === null ? {} : { 'x-integrator-api-key': key });
    let own: OrderRow;

    before(async () => {
      own = await orders.insert(order());
    });

    it('shows a refunded order\'s refund transaction (refund_tx_hash) beside its deposit', async () => {
      const refunded = await orders.insert(order());
      const hash = '0x' + 'c'.repeat(64);
      await orders.transition(refunded, 'Refunded', { refund_address: '0x' + '4'.repeat(40), refund_tx_hash: hash }, { event: 'refund_sent' });
      const read = await call('GET', `/api/v1/integrator/orders/${refunded.order_no}`, undefined, { 'x-integrator-api-key': keyA });
      expect(read.body.data).to.include({ state: 'Refunded', refund_tx_hash: hash, refund_address: '0x' + '4'.repeat(40) });
      const fresh = await call('GET', `/api/v1/integrator/orders/${own.order_no}`, undefined, { 'x-integrator-api-key': keyA });
      expect(fresh.body.data).to.include({ refund_tx_hash: null });
    });

    it('lists the verified deposits the order could not take (extra_deposits), another token\'s with its asset, never the one it took nor an unverified one', async () => {
      const paid = await orders.insert(order());
      const taken = '0x' + '1a'.repeat(32);
      await orders.transition(paid, 'Exchanging', { deposit_tx_hash: taken, deposit_amount: paid.amount_in, deposited_at: new Date() }, { event: 'deposit' });
      const deposits = new OrderDepositRepository(db);
      const extra = '0x' + '2b'.repeat(32);
      const txTime = new Date('2026-12-01T10:00:00Z');
      for (const [hash, status, amount] of [[taken, 'verified', paid.amount_in], [extra, 'verified', '4200'], ['0x' + '3c'.repeat(32), 'unverified', undefined]] as const) {
        const row = await deposits.record({ order_id: paid.id, chain_type: 'ethereum', network: 'ethereum-mainnet', tx_hash: hash, address: paid.deposit_address }, new Date());
        if (status === 'verified') await deposits.checked(row.id, { status, amount: BigInt(amount!), txTime }, new Date());
      }
      // another token paid to the address: listed with its asset
      const usdc = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
      const wrong = await deposits.record({ order_id: paid.id, chain_type: 'ethereum', network: 'ethereum-mainnet', tx_hash: '0x' + '4d'.repeat(32), address: paid.deposit_address }, new Date());
      await deposits.checked(wrong.id, { status: 'not_paid', other: { asset: usdc, amount: 2_500_000n }, txTime }, new Date());
      const read = await call('GET', `/api/v1/integrator/orders/${paid.order_no}`, undefined, { 'x-integrator-api-key': keyA });
      expect((read.body.data as { extra_deposits: unknown }).extra_deposits).to.deep.equal([
        { tx_hash: extra, amount: '4200', network: 'ethereum-mainnet', deposited_at: txTime.toISOString() },
        { tx_hash: '0x' + '4d'.repeat(32), amount: '2500000', network: 'ethereum-mainnet', deposited_at: txTime.toISOString(), asset: usdc },
      ]);
      const none = await call('GET', `/api/v1/integrator/orders/${own.order_no}`, undefined, { 'x-integrator-api-key': keyA });
      expect((none.body.data as { extra_deposits: unknown }).extra_deposits).to.deep.equal([]);
    });

    it('reads the own order with its snapshots; 401 without or with an invalid key, 403 for another integrator or a disabled one', async () => {
      const a = await call('GET', `/api/v1/integrator/orders/${own.order_no}`, undefined, { 'x-integrator-api-key': keyA });
      expect(a.status).to.equal(200);
      expect(a.body).to.include({ code: 0, msg: 'ok' });
      expect(a.body.data).to.include({
        order_no: own.order_no, state: 'Depositing', integrator_id: integratorA, amount_in: '100000000000000000',
        fee_integrator: '250000000000000', fee_platform_original: '550000000000000', integrator_fee_rate: '0.0025', deposit_tx_hash: null,
      });
      expect((await call('GET', `/api/v1/integrator/orders/${own.order_no}`)).status).to.equal(401);
      expect((await call('GET', `/api/v1/integrator/orders/${own.order_no}`, undefined, { authorization: `ApiKey ${keyA}` })).status, 'refund-style auth: the header only').to.equal(401);
      const other = await call('GET', `/api/v1/integrator/orders/${own.order_no}`, undefined, { 'x-integrator-api-key': keyB });
      expect(other).to.deep.equal({ status: 403, body: { code: 403, msg: 'order does not belong to integrator', data: null } });
      const unknown = await call('GET', '/api/v1/integrator/orders/NOPE', undefined, { 'x-integrator-api-key': keyA });
      expect(unknown).to.deep.equal({ status: 400, body: { code: 400, msg: 'order not found', data: null } });
    });

    it('refund auth rows: 401 unauthorized (missing, unknown, disabled key), 403 integrator disabled, 403 other integrator', async () => {
      const unauthorized = { status: 401, body: { code: 401, msg: 'unauthorized', data: null } };
      expect(await refund(own.order_no, { refund_address: EVM_ADDR }, null)).to.deep.equal(unauthorized);
      expect(await refund(own.order_no, { refund_address: EVM_ADDR }, 'cpk_x')).to.deep.equal(unauthorized);
      expect(await refund(own.order_no, { refund_address: EVM_ADDR }, keyDisabled)).to.deep.equal(unauthorized);
      const viaAuthorization = await call('POST', `/api/v1/integrator/orders/${own.order_no}/request_refund`, { refund_address: EVM_ADDR }, { authorization: `ApiKey ${keyA}` });
      expect(viaAuthorization).to.deep.equal(unauthorized);
      expect(await refund(own.order_no, { refund_address: EVM_ADDR }, keyDisabledIntegrator)).to.deep.equal({ status: 403, body: { code: 403, msg: 'integrator disabled', data: null } });
      expect(await refund(own.order_no, { refund_address: EVM_ADDR }, keyB)).to.deep.equal({ status: 403, body: { code: 403, msg: 'order does not belong to integrator', data: null } });
    });

    it('order no required, refund_address required, invalid body, order not found, refund_address invalid', async () => {
      expect400(await refund('%20', { refund_address: EVM_ADDR }), 'order no required');
      expect400(await refund(own.order_no, {}), 'refund_address required');
      expect400(await refund(own.order_no, { refund_address: '' }), 'refund_address required');
      expect400(await refund(own.order_no, '{"refund_address": '), 'invalid request body');
      expect400(await refund('NOPE', { refund_address: EVM_ADDR }), 'order not found');
      expect400(await refund(own.order_no, { refund_address: BTC_ADDR }), 'refund_address invalid'); // the source chain is Ethereum
    });

    it('state rows: finalized, not refundable, not expired yet, auto-cancel window passed, manual confirmation, nothing to refund', async () => {
      for (const state of ['Completed', 'Settled', 'Refunded', 'FailedNoRefund'] as const) {
        const o = await orders.insert(order({ state }));
        expect400(await refund(o.order_no, { refund_address: EVM_ADDR }), 'order_already_finalized');
      }
      for (const state of ['Exchanging', 'ManualReview'] as const) {
        const o = await orders.insert(order({ state }));
        expect400(await refund(o.order_no, { refund_address: EVM_ADDR }), 'order_not_in_refundable_state');
      }
      const fresh = await orders.insert(order({ expire_at: new Date(serviceClock.now() + 600_000) }));
      expect400(await refund(fresh.order_no, { refund_address: EVM_ADDR }), 'order_not_expired_yet');
      const old = await orders.insert(order({ expire_at: new Date(serviceClock.now() - 7200_000), auto_cancel_at: new Date(serviceClock.now() - 3600_000) }));
      expect400(await refund(old.order_no, { refund_address: EVM_ADDR }), 'order_auto_cancel_window_passed');
      const blind = await orders.insert(order({ state: 'ChainFailed' }));
      expect400(await refund(blind.order_no, { refund_address: EVM_ADDR }), 'refund_requires_manual_confirmation');
      const empty = await orders.insert(order({ state: 'SlippageFailed' }));
      await db('agg.orders').where({ id: empty.id }).update({ execution: JSON.stringify({ outcome: 'SlippageFailed' }) });
      expect400(await refund(empty.order_no, { refund_address: EVM_ADDR }), 'no_amount_to_refund');
    });

    it('an expired unpaid order goes to manual review; the same address again is ok, another is refund_address_cannot_be_changed', async () => {
      const o = await orders.insert(order());
      const ok = await refund(o.order_no, { refund_address: EVM_ADDR.toUpperCase().replace('0X', '0x') });
      expect(ok).to.deep.equal({ status: 200, body: { code: 0, msg: 'ok', data: 'ok' } });
      const stored = (await orders.findById(o.id))!;
      expect(stored).to.include({ state: 'ManualReview', refund_address: EVM_ADDR });
      expect(await refund(o.order_no, { refund_address: EVM_ADDR })).to.deep.equal({ status: 200, body: { code: 0, msg: 'ok', data: 'ok' } });
      expect((await orders.findById(o.id))!.version, 'a repeat writes nothing').to.equal(stored.version);
      expect400(await refund(o.order_no, { refund_address: '0x' + '1'.repeat(40) }), 'refund_address_cannot_be_changed');
      expect((await orders.audit(o.id)).map((r) => [r.from_state, r.to_state, r.event])).to.deep.equal([
        [null, 'Depositing', 'created'],
        ['Depositing', 'ManualReview', 'refund_request'],
      ]);
    });

    it('a failed swap with execution details and a deposit records the address and keeps its state', async () => {
      const o = await orders.insert(order({ state: 'ChainFailed' }));
      await db('agg.orders').where({ id: o.id }).update({ execution: JSON.stringify({ outcome: 'ChainFailed' }), deposit_amount: o.amount_in, deposit_tx_hash: '0xabc' });
      expect((await refund(o.order_no, { refund_address: EVM_ADDR })).status).to.equal(200);
      expect(await orders.findById(o.id)).to.include({ state: 'ChainFailed', refund_address: EVM_ADDR });
    });

    it('concurrent requests with different addresses: one wins, the others are told to retry or that the address is fixed', async () => {
      const o = await orders.insert(order());
      const addresses = Array.from({ length: 6 }, () => '0x' + randomBytes(20).toString('hex'));
      const answers = await Promise.all(addresses.map((a) => refund(o.order_no, { refund_address: a })));
      const winners = answers.filter((a) => a.status === 200);
      expect(winners).to.have.length(1);
      for (const a of answers.filter((x) => x.status !== 200)) {
        expect(a.status).to.equal(400);
        expect(['order_state_changed_retry', 'refund_address_cannot_be_changed']).to.include(a.body.msg);
      }
      const stored = (await orders.findById(o.id))!;
      expect(stored.state).to.equal('ManualReview');
      expect(stored.refund_address).to.equal(addresses[answers.indexOf(winners[0])]);
      expect((await orders.audit(o.id)).filter((r) => r.event === 'refund_request')).to.have.length(1);
    });

    it('a refund racing a state change never loses either: the loser is told order_state_changed_retry', async () => {
      for (let round = 0; round < 8; round++) {
        const o = await orders.insert(order());
        const [a, moved] = await Promise.all([refund(o.order_no, { refund_address: EVM_ADDR }), orders.transition(o, 'CancelledNoDeposit', {}, { event: 'expire' })]);
        const stored = (await orders.findById(o.id))!;
        const audit = await orders.audit(o.id);
        expect(audit, 'one audit row per applied change').to.have.length(stored.version + 1);
        if (a.status === 200) {
          // the refund applied, before the expiry (which then lost) or after it
          expect(stored).to.include({ state: 'ManualReview', refund_address: EVM_ADDR });
          expect(stored.version).to.equal(moved ? 2 : 1);
        } else {
          // the expiry changed the order between the refund's read and its write
          expect(a.body).to.deep.equal({ code: 400, msg: 'order_state_changed_retry', data: null });
          expect(stored).to.include({ state: 'CancelledNoDeposit', refund_address: null });
          expect((await refund(o.order_no, { refund_address: EVM_ADDR })).status, 'the retry succeeds').to.equal(200);
        }
      }
    });
  });
});

describe('aggregator-gateway process: the order module on the service kit', function () {
  this.timeout(90_000);
  const env = testEnv();
  let proc: RunningProcess | undefined;
  let base = '';

  before(async () => {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    proc = spawnTs('apps/aggregator-gateway/src/main.ts', {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: uniquePrefix('aggw'),
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: env.redisUrl,
      PORT: String(port),
      OPS_PORT: String(ops),
      LOG_LEVEL: 'warn',
    });
    await waitReady(proc, ops, 60_000);
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    if (proc) expect(await stopProcess(proc), 'clean exit').to.equal(0);
  });

  it('serves its API document and answers by it: body checks, refunds need a key', async () => {
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as Parameters<typeof responseCheck>[0];
    expect(Object.keys(document.paths)).to.include.members(['/api/v1/integrator/orders', '/api/v1/integrator/orders/{orderNo}/request_refund']);
    const check = responseCheck(document);
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const json = await res.json();
      expect(check('POST', path, res.status, res.headers.get('content-type'), json)).to.equal(undefined);
      return { status: res.status, body: json };
    };
    const order = {
      src_token_id: 101, dst_token_id: 1001, amount_in: '1', dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', chosen_channel_id: 1, slippage: 0.01,
      main_channel_estimated_out_amount: '100', min_acceptable_out_amount: '99', channels: [{ channel_id: 1, estimated_out_str: '100' }],
    };
    expect(await post('/api/v1/integrator/orders', { ...order, slippage: 1 })).to.deep.equal({ status: 400, body: { code: 400, msg: 'slippage out of range', data: null } });
    expect(await post('/api/v1/integrator/orders/X/request_refund', { refund_address: '0x' + '1'.repeat(40) })).to.deep.equal({ status: 401, body: { code: 401, msg: 'unauthorized', data: null } });
  });
});
