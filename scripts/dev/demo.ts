/**
 * make demo (after make up): every service at work in about a minute, each step printed.
 *
 *   1. candlesticks: register and activate a pool, subscribe over WebSocket, wait for a live candle
 *   2. address monitoring: a new application with a monitored address and an open WebSocket;
 *      fixture blocks replayed to /stream; the push of the address's transaction
 *   3. token prices: the latest quotes of ETH and USDC
 *   4. aggregator: a quote stream (SSE), the best channel, an order with a deposit address
 *   5. aggregator: the development payer pays the deposit address on the simulated chain; the
 *      order goes Depositing → Exchanging (forwarded) → Completed → Settled with no manual step,
 *      each step also shown from the order's events on orders.events.v1
 *   6. aggregator: an order whose minimum output cannot be met is paid, forwards nothing
 *      (SlippageFailed → RefundAddressPending), and after the user's refund request the
 *      principal less the network fee goes back on the chain (Refunded, its hash on the order)
 *
 * Talks to the running stack only over its public APIs, with the development credentials of
 * .run/dev.env. Exits 1 when a step fails, so it doubles as a smoke test of `make up`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { createParser } from 'eventsource-parser';
import { Kafka, logLevel } from 'kafkajs';
import WebSocket from 'ws';
import { parseGwei, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { TOPICS, type OrderEventMessage } from '@chainpipe/contracts';
import { mnemonicWords } from '@chainpipe/custody';
import { appPorts, publicPort, type PublicAppName } from '@chainpipe/runtime';
import { replayFixtures, withDevEnv } from '@chainpipe/upstream-sim';

const ROOT = path.resolve(__dirname, '../..');
const HOST = process.env.DEMO_HOST ?? '127.0.0.1';
const url = (app: PublicAppName, p: string, proto = 'http') => `${proto}://${HOST}:${publicPort(app)}${p}`;
// The pool of the candlestick example in docs/development.md ("The candlestick service") (Uniswap v3 USDC/WETH) and an address of a replayed Ethereum block.
const POOL = { chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640' };
const WATCHED = '0xc0d776e2223c9a2ad13433dab7ec08cb9c5e76ae';
const STEP_TIMEOUT_MS = Number(process.env.DEMO_STEP_TIMEOUT_MS ?? 30_000);

let stepNo = 0;
const step = (title: string) => console.log(`\n${++stepNo}. ${title}`);
const show = (label: string, value: unknown) => console.log(`   ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);

async function call(method: string, href: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(href, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON: shown as text */
  }
  return { status: res.status, json };
}

function expectStatus(r: { status: number; json: unknown }, ok: number[], what: string): void {
  if (!ok.includes(r.status)) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.json)}`);
}

/** A WebSocket whose messages are kept, with a wait for the first one matching a test. */
async function openSocket(href: string, headers: Record<string, string>) {
  const ws = new WebSocket(href, { headers });
  const seen: any[] = [];
  const waiters: Array<{ test: (m: any) => boolean; resolve: (m: any) => void }> = [];
  ws.on('message', (raw) => {
    const m = JSON.parse(String(raw));
    seen.push(m);
    for (const w of [...waiters]) {
      if (!w.test(m)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(m);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`${href}: HTTP ${res.statusCode}`)));
  });
  const next = (test: (m: any) => boolean, what: string, ms = STEP_TIMEOUT_MS) =>
    new Promise<any>((resolve, reject) => {
      const found = seen.find(test);
      if (found) return resolve(found);
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
      waiters.push({ test, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  return { ws, next, send: (m: unknown) => ws.send(JSON.stringify(m)) };
}

async function candlesticks(apiKey: string, operatorKey: string): Promise<void> {
  const H = { 'X-API-Key': apiKey };
  // Pools are shared by every application: registering and activating one takes an operator's key.
  const OPS = { 'X-API-Key': operatorKey };
  step('Candlesticks: register a pool (an operator key), activate it, and watch a live candle');
  let created = await call('POST', url('market-gateway', '/api/v1/admin/pools'), OPS, POOL);
  expectStatus(created, [200, 409], 'register pool');
  let pool = created.json.data;
  if (created.status === 409) {
    // Registered by an earlier run: find it in the list.
    created = await call('GET', url('market-gateway', '/api/v1/admin/pools?page_size=100'), H);
    pool = created.json.data.items.find((p: any) => p.pool_address.toLowerCase() === POOL.pool_address && p.chain_id === POOL.chain_id);
    show('already registered', `pool ${pool.id}`);
  } else show('registered', `pool ${pool.id} (${pool.chain_type}:${pool.chain_id} ${pool.pool_address})`);
  const activated = await call('PATCH', url('market-gateway', `/api/v1/admin/pools/${pool.id}/activate`), OPS);
  expectStatus(activated, [200], 'activate pool');
  show('activated', `is_active=${activated.json.data.is_active}`);

  const sock = await openSocket(url('market-gateway', '/kline/api/v1/kline/ws', 'ws'), H);
  sock.send({ id: 'demo-sub', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: POOL.pool_address, intervals: ['1s', '1m'] } });
  const subscribed = await sock.next((m) => m.id === 'demo-sub', 'subscribe answer');
  show('subscribed', `${subscribed.type} code ${subscribed.code}`);
  const candle = await sock.next((m) => m.type === 'ohlcv' && m.id !== 'demo-sub', 'live candle (the ingester subscribes upstream first)');
  const c = candle.data;
  show('live candle', `${c.interval ?? ''} open_time ${c.open_time ?? c.t ?? ''} o=${c.open ?? c.o} h=${c.high ?? c.h} l=${c.low ?? c.l} c=${c.close ?? c.c} v=${c.volume ?? c.v}`);
  sock.ws.close();
  const now = Math.floor(Date.now() / 1000);
  const history = await call('GET', url('market-gateway', `/kline/api/v1/kline/ohlcv?interval=1s&from=${now - 600}&to=${now}&chain_type=evm&chain_id=1&pool_address=${POOL.pool_address}`), H);
  expectStatus(history, [200], 'ohlcv history');
  show('history (1s, last 10 min)', `${history.json.data.length} candles`);
  show('see them move', `${url('market-gateway', '/kline/demo')}#key=<DEMO_API_KEY of .run/dev.env>`);
}

async function addressMonitoring(env: Record<string, string>): Promise<void> {
  step('Address monitoring: a new application, a monitored address, a WebSocket, fixture blocks on /stream');
  const { stdout } = await promisify(execFile)('npx', ['--no-install', 'tsx', 'apps/admin/src/main.ts', 'app:create', '--name', `Demo walkthrough ${new Date().toISOString()}`, '--quiet'], { cwd: ROOT, env: { ...process.env, ...env } });
  const apiKey = stdout.trim();
  show('application created, key', `${apiKey.split('_').slice(0, 2).join('_')}_… (printed once by npm run admin -- app:create)`);
  const H = { 'X-API-Key': apiKey };
  const added = await call('POST', url('tx-gateway', '/tx/api/v1/addresses'), H, { wallets: [{ chain_type: 'ethereum', address: [WATCHED] }] });
  expectStatus(added, [200], 'add address');
  show('monitoring', `ethereum ${WATCHED}`);

  const sock = await openSocket(url('tx-gateway', '/tx/api/v1/transaction/ws', 'ws'), H);
  const connected = await sock.next((m) => m.type === 'connected', 'connected message');
  show('WebSocket', `connected, clientId ${connected.data?.clientId ?? connected.data}`);

  const results = await replayFixtures({ all: true, network: 'ethereum-mainnet', target: url('chain-ingest', '/stream'), secret: env.STREAM_SECRET });
  for (const r of results) show(`POST /stream ${r.network} block ${r.startRange}`, `HTTP ${r.status ?? r.error}`);
  if (results.some((r) => !r.ok)) throw new Error('a replay post failed');

  try {
    const push = await sock.next((m) => m.type === 'transaction', 'transaction push', 20_000);
    const d = push.data;
    show('push', `tx ${d.txhash} at height ${d.height}: ${d.sender} → ${d.receiver}, amount ${d.amount} (smallest unit of ${d.symbol}, ${d.decimals} decimals) (listenAddress ${JSON.stringify(d.listenAddress)})`);
    sock.send({ id: 'demo-ack', type: 'transactionACK', data: { chain_type: 'ethereum', chain_id: 1, txHash: d.txhash } });
    show('acknowledged', 'transactionACK sent (no resend)');
  } catch {
    // chain-parser publishes only new or changed transactions: blocks stored by an earlier run push nothing.
    show('push', 'none: these blocks were stored by an earlier run, and only new transactions are pushed');
  }
  sock.ws.close();
  const search = await call('POST', url('tx-gateway', '/tx/api/v1/transfers/search'), H, { address: WATCHED, chain_type: 'ethereum', limit: 3 });
  expectStatus(search, [200], 'history search');
  show('history search', `${search.json.data.length} transactions, newest ${search.json.data[0]?.tx_hash ?? '-'}`);
}

async function prices(apiKey: string): Promise<void> {
  step('Token prices: latest quotes of ETH (101) and USDC (103) in EUR');
  const latest = await call('GET', url('market-gateway', '/price/api/v1/quotes/latest?ids=101,103&fiat=EUR'), { 'X-API-Key': apiKey });
  expectStatus(latest, [200], 'latest quotes');
  for (const q of latest.json.data.items) show(`${q.symbol} (${q.token_id})`, `${q.price} ${q.fiat_code}, market cap ${q.market_cap}`);
}

/** The (application, address) pairs in tx-matcher's index, from its metrics. */
async function matcherIndexSize(): Promise<number> {
  const res = await fetch(`http://${HOST}:${appPorts('tx-matcher')!.ops}/metrics`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
  const size = /^chainpipe_matcher_index_addresses(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(await res.text())?.[1];
  if (size === undefined) throw new Error('tx-matcher reports no chainpipe_matcher_index_addresses');
  return Number(size);
}

async function aggregator(integratorKey: string): Promise<Order> {
  step('Aggregator: stream quotes (SSE) for 0.1 ETH → BTC, pick the best channel, create an order');
  const amountIn = '100000000000000000';
  const res = await fetch(url('aggregator-gateway', `/api/v2/quote/stream?src_token_id=101&dst_token_id=1001&amount_in=${amountIn}&slippage=0.01`), {
    headers: { accept: 'text/event-stream' },
    signal: AbortSignal.timeout(STEP_TIMEOUT_MS * 3),
  });
  if (res.status !== 200 || !res.body) throw new Error(`quote stream: HTTP ${res.status} ${await res.text()}`);
  const channels: any[] = [];
  let done = false;
  const parser = createParser({
    onEvent: (e) => {
      const data = JSON.parse(e.data);
      if (e.event === 'channel') {
        channels.push(data);
        show(`event channel ${data.channel_id} ${data.name}`, `estimated_out ${data.estimated_out_str} (fee ${data.channel_fee} %)`);
      } else if (e.event === 'error') show('event error', data);
      else if (e.event === 'done') done = true;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (done) break;
  }
  show('event done', `${channels.length} channel quotes`);
  if (channels.length === 0) throw new Error('no channel quoted');
  const best = channels.reduce((a, b) => (BigInt(b.estimated_out_str) > BigInt(a.estimated_out_str) ? b : a));
  const order = await createOrder(integratorKey, channels, best, amountIn, 99n);
  const read = await call('GET', url('aggregator-gateway', `/api/v1/integrator/orders/${order.orderNo}`), { 'X-Integrator-Api-Key': integratorKey });
  expectStatus(read, [200], 'read order');
  show('order read back', `state ${read.json.data.state}, integrator commission ${read.json.data.fee_integrator} wei`);
  return order;
}

type Order = Awaited<ReturnType<typeof createOrder>>;

/** An order of 0.1 ETH → BTC on `best`, its minimum output `minPercent` % of the channel's estimate. */
async function createOrder(integratorKey: string, channels: any[], best: any, amountIn: string, minPercent: bigint) {
  const minOut = ((BigInt(best.estimated_out_str) * minPercent) / 100n).toString();
  const indexBefore = await matcherIndexSize();
  const order = await call('POST', url('aggregator-gateway', '/api/v1/integrator/orders'), { 'X-Integrator-Api-Key': integratorKey }, {
    src_token_id: 101,
    dst_token_id: 1001,
    amount_in: amountIn,
    dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    chosen_channel_id: best.channel_id,
    slippage: 0.01,
    main_channel_estimated_out_amount: best.estimated_out_str,
    min_acceptable_out_amount: minOut,
    channels: channels.map((c) => ({ channel_id: c.channel_id, estimated_out_str: c.estimated_out_str })),
    client_order_id: `demo-${randomBytes(6).toString('hex')}`,
  });
  expectStatus(order, [200], 'create order');
  const o = order.json.data;
  show('order', `${o.order_id} (${o.order_no}) via channel ${best.channel_id} ${best.name}, minimum output ${minOut}: send ${amountIn} wei to ${o.deposit_address} before ${o.expire_at}`);
  return { orderNo: o.order_no as string, depositAddress: o.deposit_address as string, amountIn: BigInt(amountIn), channel: String(best.name), indexBefore, channels, best };
}

/**
 * The user pays: the development payer (DEV_SIGNER_MNEMONIC's EVM account 1, funded on the
 * simulator's chains) sends amount_in to the order's deposit address once tx-matcher knows it
 * (a transaction before that pays nobody, as on a real chain). Then nothing but the stack: the
 * deposit through /stream, the forward of the net amount by order-executor, THORChain's swap,
 * the tracker's Completed and Settled.
 */
async function payAndFollow(env: Record<string, string>, integratorKey: string, order: Order): Promise<void> {
  step('Aggregator: the user pays the deposit address on the simulated chain; the platform forwards it; the channel swaps');
  await pay(env, order);
  await follow(integratorKey, order, ['Depositing', 'Exchanging', 'Completed'], 'Settled');
  // Completed and Settled come in one tracker pass: the event stream shows every step.
  const events = await orderEvents(env, order.orderNo, 'settle');
  show('orders.events.v1', events.map((e) => `${e.event} → ${e.to_state}`).join(', '));
}

/** The order's events on orders.events.v1 (what an integrator's backend would follow), up to `last`. */
async function orderEvents(env: Record<string, string>, orderNo: string, last: string): Promise<OrderEventMessage[]> {
  const kafka = new Kafka({ clientId: 'demo', brokers: env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const groupId = `demo-${randomBytes(4).toString('hex')}`;
  const consumer = kafka.consumer({ groupId });
  const events: OrderEventMessage[] = [];
  let seenLast!: () => void;
  const finished = new Promise<void>((resolve) => (seenLast = resolve));
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: TOPICS.ordersEvents.name, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const e = JSON.parse(message.value!.toString()) as OrderEventMessage;
        if (e.order_no !== orderNo) return;
        events.push(e);
        if (e.event === last) seenLast();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${last} event of ${orderNo} on ${TOPICS.ordersEvents.name}`)), STEP_TIMEOUT_MS * 2)));
    await Promise.race([finished, timedOut]).finally(() => clearTimeout(timer));
  } finally {
    await consumer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
  return events;
}

/**
 * The development payer (DEV_SIGNER_MNEMONIC's EVM account 1, funded on the simulator's chains)
 * sends amount_in to the order's deposit address once tx-matcher knows it (a transaction before
 * that pays nobody, as on a real chain). Returns the payer's address.
 */
async function pay(env: Record<string, string>, order: Order): Promise<string> {
  const deadline = Date.now() + STEP_TIMEOUT_MS * 4;
  while ((await matcherIndexSize()) <= order.indexBefore) {
    if (Date.now() > deadline) throw new Error('tx-matcher never learned the deposit address');
    await new Promise((r) => setTimeout(r, 200));
  }
  const payer = mnemonicToAccount(mnemonicWords(env.DEV_SIGNER_MNEMONIC), { accountIndex: 1 });
  const nonce = Number(await rpc('eth_getTransactionCount', [payer.address, 'pending']));
  const raw = await payer.signTransaction({ chainId: 1, type: 'eip1559', to: order.depositAddress as Hex, value: order.amountIn, nonce, gas: 21_000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') });
  show('deposit sent', `${await rpc('eth_sendRawTransaction', [raw])} from ${payer.address}`);
  return payer.address;
}

async function rpc(method: string, params: unknown[]): Promise<any> {
  const r = await call('POST', url('upstream-sim', '/rpc/ethereum-mainnet'), {}, { jsonrpc: '2.0', id: 1, method, params });
  if (r.json?.error) throw new Error(`${method}: ${r.json.error.message}`);
  return r.json.result;
}

/** Reads the order until it reaches `end`, showing each state it passes; any state outside `passing` fails. */
async function follow(integratorKey: string, order: Order, passing: string[], end: string): Promise<any> {
  const deadline = Date.now() + STEP_TIMEOUT_MS * 4;
  let last = '';
  for (;;) {
    const read = await call('GET', url('aggregator-gateway', `/api/v1/integrator/orders/${order.orderNo}`), { 'X-Integrator-Api-Key': integratorKey });
    expectStatus(read, [200], 'read order');
    const d = read.json.data;
    const seen = `${d.state}${d.state === 'Exchanging' && d.forward_tx_hash ? ' (forwarded)' : ''}`;
    if (seen !== last) {
      last = seen;
      const detail =
        d.state === 'Settled' ? `payout ${d.payout_tx_hash}`
        : d.state === 'Refunded' ? `refund ${d.refund_tx_hash} to ${d.refund_address}`
        : d.forward_tx_hash ? `forward ${d.forward_tx_hash}`
        : d.deposit_tx_hash ? `deposit ${d.deposit_tx_hash} of ${d.deposit_amount} wei`
        : '';
      show(seen, detail);
    }
    if (d.state === end) return d;
    if (!passing.includes(d.state)) throw new Error(`order ${order.orderNo} went ${d.state}`);
    if (Date.now() > deadline) throw new Error(`order ${order.orderNo} still ${d.state}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * A failed swap refunded: an order the platform accepts (its minimum is within reach of its
 * quote; one that is not is refused at creation) is paid after the market moved: Bitcoin 10 %
 * dearer on the simulator, so the executor's fresh quote is below the order's minimum, nothing is
 * forwarded (SlippageFailed, then RefundAddressPending: the order has no refund address); the
 * user asks for a refund to the paying account, and the executor sends the principal less the
 * network fee back. The simulator's Bitcoin price is put back afterwards.
 */
async function failAndRefund(env: Record<string, string>, integratorKey: string, first: Order): Promise<void> {
  step('Aggregator: the market moves past an order\'s slippage before it is paid; nothing is forwarded; the user asks for a refund and gets it');
  const order = await createOrder(integratorKey, first.channels, first.best, first.amountIn.toString(), 99n);
  const btc = await call('GET', url('upstream-sim', '/cmc/v2/cryptocurrency/quotes/latest?id=1'), {});
  expectStatus(btc, [200], 'read the simulated BTC price');
  const price = Number(btc.json.data['1'].quote.USD.price);
  const pin = async (to: number) => expectStatus(await call('PUT', url('upstream-sim', '/sim/cmc/quotes/1'), {}, { price: to }), [200], 'pin the simulated BTC price');
  await pin(price * 1.1);
  show('market moved', `BTC ${price.toFixed(2)} → ${(price * 1.1).toFixed(2)} USD on the simulator`);
  let payer: string;
  try {
    payer = await pay(env, order);
    await follow(integratorKey, order, ['Depositing', 'Exchanging', 'SlippageFailed'], 'RefundAddressPending');
  } finally {
    await pin(price);
    expectStatus(await call('DELETE', url('upstream-sim', '/sim/cmc/quotes/1'), {}), [200], 'unpin the simulated BTC price');
  }
  const refund = await call('POST', url('aggregator-gateway', `/api/v1/integrator/orders/${order.orderNo}/request_refund`), { 'X-Integrator-Api-Key': integratorKey }, { refund_address: payer });
  expectStatus(refund, [200], 'request refund');
  show('refund requested', `to ${payer}`);
  const done = await follow(integratorKey, order, ['RefundAddressPending'], 'Refunded');
  const tx = await rpc('eth_getTransactionByHash', [done.refund_tx_hash]);
  if (!tx || String(tx.to).toLowerCase() !== payer.toLowerCase()) throw new Error(`refund ${done.refund_tx_hash} is not a transfer to ${payer}`);
  show('on the chain', `${BigInt(tx.value)} wei of ${order.amountIn} back to ${tx.to} (the rest paid the network fee)`);
}

async function main(): Promise<void> {
  const env = withDevEnv(process.env) as Record<string, string>;
  for (const name of ['DEMO_API_KEY', 'DEMO_OPERATOR_KEY', 'DEMO_INTEGRATOR_KEY', 'STREAM_SECRET', 'DEV_SIGNER_MNEMONIC', 'KAFKA_BROKERS']) if (!env[name]) throw new Error(`${name} missing from .run/dev.env: run \`make up\` first`);
  const t0 = Date.now();
  await candlesticks(env.DEMO_API_KEY, env.DEMO_OPERATOR_KEY);
  await addressMonitoring(env);
  await prices(env.DEMO_API_KEY);
  const order = await aggregator(env.DEMO_INTEGRATOR_KEY);
  await payAndFollow(env, env.DEMO_INTEGRATOR_KEY, order);
  await failAndRefund(env, env.DEMO_INTEGRATOR_KEY, order);
  console.log(`\ndemo: every step passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(`\ndemo failed at step ${stepNo}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
