import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { parseGwei, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { loadContracts } from '@chainpipe/contracts';
import { MnemonicSigner, SingleKeySigner, rootOfMnemonic } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';

import { OrderRepository } from '@chainpipe/order-store';
import { QuoteStore } from '@chainpipe/price-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import {
  createIntegratorWithKey, createRegistryTopics, freePort, parsePrometheusText, simSolana, simTron, spawnTs, stopProcess, suiteDatabase, TEST_KEY_MNEMONIC, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess,
} from '@chainpipe/testing';
import { scannedMetricTypes } from '../contracts/metrics-scan';

interface SseEvent {
  event: string;
  data: unknown;
}

/** A real SSE client over fetch: reads `event:`/`data:` blocks until the server ends the stream. */
async function readSse(url: string, init: RequestInit = {}): Promise<{ status: number; contentType: string | null; events: SseEvent[]; comments: number }> {
  const res = await fetch(url, { ...init, headers: { accept: 'text/event-stream', ...(init.headers as Record<string, string>) } });
  const events: SseEvent[] = [];
  let comments = 0;
  if (!res.body) return { status: res.status, contentType: res.headers.get('content-type'), events, comments };
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.startsWith(':')) {
        comments++;
        continue;
      }
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (name && data !== undefined) events.push({ event: name, data: JSON.parse(data) });
    }
  }
  return { status: res.status, contentType: res.headers.get('content-type'), events, comments };
}

/**
 * The spec's end-to-end sequence with every part a process: quotes over SSE, the largest
 * estimate chosen, min_acceptable_out_amount computed, the order created with an integrator key,
 * the user paying the order's deposit address on the simulator's chain (which posts its blocks
 * to /stream), the deposit seen through chain-parser, tx-matcher and tx.push.v1 by
 * order-tracker, order-executor forwarding the net amount to THORChain's vault, the simulated
 * THORChain swapping it by itself, the order Completed then Settled, and the commission line in
 * the ledger; and a TRX order the same way on the simulated Tron, through ChangeNOW. No step is
 * driven by hand.
 */
describe('aggregator end to end: SSE quotes → order → deposit on chain → Completed → Settled → ledger', function () {
  this.timeout(240_000);
  const env = testEnv();
  const procs: RunningProcess[] = [];
  const secret = randomBytes(12).toString('hex');
  const redisPrefix = `e2eagg-${randomBytes(3).toString('hex')}:`;
  const contracts = loadContracts();
  let db: Knex;
  /** A database of the suite's own: its executor acts on every paid order it finds (suiteDatabase). */
  let databaseUrl: string;
  let redis: Redis;
  let sim = '';
  let gateway = '';
  let ingest = '';
  let key = '';
  let integratorId = '';
  // the payers are keys of account 1, apart from the platform's deposit keys (account 0, index = the order's deposit_index)
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { accountIndex: 1, addressIndex: 19 });
  /** The user's Solana wallet: a key of another mnemonic than the platform's. */
  const solWallet = new MnemonicSigner('legal winner thank year wave sausage worth useful legal winner thank yellow');
  let solPayer = { index: 0, address: '' };
  const signerToken = randomBytes(8).toString('hex');
  /** The Tron payer: the test mnemonic's key m/44'/195'/1'/0/0 (account 1), funded on the simulated Tron. */
  const tronWallet = new SingleKeySigner('tvm', rootOfMnemonic(TEST_KEY_MNEMONIC).derive("m/44'/195'/1'/0/0").privateKey!);
  const tronPayer = { index: 0, address: tronWallet.address };
  const tron = simTron(() => sim, tronWallet);
  let matcherOps = 0;
  /** The (application, address) pairs in the matcher's index: this stack's changes topic is the test's own. */
  const matcherIndexSize = async () => {
    const text = await (await fetch(`http://127.0.0.1:${matcherOps}/metrics`)).text();
    return Number(/^chainpipe_matcher_index_addresses(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text)?.[1] ?? NaN);
  };

  /** Ops port of every app started, by entry file. */
  const opsPorts = new Map<string, number>();
  const start = async (entry: string, extra: Record<string, string>, port?: number): Promise<number> => {
    const ops = await freePort();
    opsPorts.set(entry, ops);
    const p = spawnTs(entry, { ...extra, OPS_PORT: String(ops), ...(port ? { PORT: String(port) } : {}), LOG_LEVEL: 'warn' });
    procs.push(p);
    await waitReady(p, ops, 90_000);
    return ops;
  };

  before(async () => {
    databaseUrl = await suiteDatabase('aggregator_e2e');
    db = createDb({ url: databaseUrl, poolMax: 4 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: redisPrefix });
    const prefix = uniquePrefix('aggE2e');
    await createRegistryTopics(prefix);
    const [simPort, gwPort, ingestPort] = await Promise.all([freePort(), freePort(), freePort()]);
    sim = `http://127.0.0.1:${simPort}`;
    gateway = `http://127.0.0.1:${gwPort}`;
    ingest = `http://127.0.0.1:${ingestPort}`;
    solPayer = { index: 0, address: await solWallet.addressAt('svm', 0) };
    // the simulator's chains post their blocks to this stack's chain-ingest; THORChain watches them.
    // Its signing service holds the platform's keys: the gateway asks it for Solana addresses
    await start(
      'apps/upstream-sim/src/main.ts',
      { SIM_BLOCK_MS: '400', SIM_STREAM_URL: `${ingest}/stream`, STREAM_SECRET: secret, SIM_FUNDED_ACCOUNTS: `${payer.address},${solPayer.address}`, SIM_FUNDED_TRON_ADDRESSES: tronPayer.address, SIM_THORCHAIN_SWAP_MS: '500', SIM_SIGNER_MNEMONIC: TEST_KEY_MNEMONIC, SIM_SIGNER_TOKEN: signerToken },
      simPort,
    );
    for (const [id, price] of [['1027', 2000], ['1', 50000], ['5426', 100], ['1958', 0.25]] as const) {
      await fetch(`${sim}/sim/cmc/quotes/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ price }) });
    }
    const now = Date.now();
    await new QuoteStore(redis).writeLatest([
      { kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: now, fetched_at: now, usd: { price: 2000 } },
      { kind: 'crypto', source: 'test', external_id: '1', symbol: 'BTC', name: 'Bitcoin', as_of: now, fetched_at: now, usd: { price: 50000 } },
      { kind: 'crypto', source: 'test', external_id: '5426', symbol: 'SOL', name: 'Solana', as_of: now, fetched_at: now, usd: { price: 100 } },
      { kind: 'crypto', source: 'test', external_id: '1958', symbol: 'TRX', name: 'TRON', as_of: now, fetched_at: now, usd: { price: 0.25 } },
    ] as never);
    const common = {
      KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: redisPrefix,
      CHANGENOW_API_URL: `${sim}/changenow`, THORNODE_API_URL: `${sim}/thornode`, ORDER_DEPOSIT_APP_ID: `deposits-${randomBytes(3).toString('hex')}`,
    };
    matcherOps = await freePort();
    opsPorts.set('apps/tx-matcher/src/main.ts', matcherOps);
    await Promise.all([
      start('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret }, ingestPort),
      start('apps/chain-parser/src/main.ts', { ...common, CHAIN_PARSER_GROUP: `${prefix}parser` }),
      (async () => {
        const p = spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), LOG_LEVEL: 'warn', TX_MATCHER_GROUP: `${prefix}matcher`, TX_MATCHER_CHANGES_GROUP_PREFIX: `${prefix}changes`, TX_MATCHER_SESSION_TIMEOUT_MS: '6000' });
        procs.push(p);
        await waitReady(p, matcherOps, 90_000);
      })(),
      start('apps/aggregator-gateway/src/main.ts', { ...common, DEPOSIT_SIGNER_URL: `${sim}/signer`, DEPOSIT_SIGNER_TOKEN: signerToken, DEV_SIGNER_MNEMONIC: '' }, gwPort),
      start('apps/order-tracker/src/main.ts', { ...common, CHAIN_RPC_DEFAULT_BASE: `${sim}/rpc`, CHAIN_RPC_URLS: '', ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_INTERVAL_MS: '300', ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000' }),
      start('apps/order-executor/src/main.ts', { ...common, CHAIN_RPC_DEFAULT_BASE: `${sim}/rpc`, CHAIN_RPC_URLS: '', ORDER_EXECUTOR_INTERVAL_MS: '300', ORDER_EXECUTOR_CONFIRMATIONS: 'ethereum=2,solana=2,tron=2' }),
    ]);
    ({ id: integratorId, key } = await createIntegratorWithKey(db, { name: 'E2E wallet', feeRateBp: 50 }));
  });

  after(async () => {
    // Every app stopped whatever another did; one that did not exit cleanly is named, with the
    // end of what it printed (a stop held past the deadline shows what it was waiting on).
    const unclean: string[] = [];
    for (const p of procs.reverse()) {
      const code = await stopProcess(p);
      if (code !== 0) unclean.push(`${p.proc.spawnargs.at(-1)} exited ${code}; its last output:\n${p.output().slice(-4_000)}`);
    }
    await redis?.quit();
    await db?.destroy();
    expect(unclean, 'every app exits cleanly on SIGTERM').to.deep.equal([]);
  });

  it('quote stream: pre-stream errors are JSON envelopes', async () => {
    const get = async (query: string) => {
      const res = await fetch(`${gateway}/api/v2/quote/stream?${query}`, { headers: { accept: 'text/event-stream' } });
      return { status: res.status, body: await res.json() };
    };
    const bad = (msg: string) => ({ status: 400, body: { code: 400, msg, data: null } });
    expect(await get('dst_token_id=1001&amount_in=1&slippage=0.01')).to.deep.equal(bad('src_token_id/dst_token_id required'));
    expect(await get('src_token_id=101&dst_token_id=1001&slippage=0.01')).to.deep.equal(bad('amount_in required'));
    expect(await get('src_token_id=999999&dst_token_id=1001&amount_in=1&slippage=0.01')).to.deep.equal(bad('token not found'));
    expect(await get('src_token_id=101&dst_token_id=1001&amount_in=1&slippage=1')).to.deep.equal(bad('slippage out of range'));
    expect(await get('src_token_id=101&dst_token_id=1001&amount_in=1&slippage=0.01&channel_id=77')).to.deep.equal(bad('channel not found'));
    const post = await fetch(`${gateway}/api/v2/quote/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"src_token_id":' });
    expect({ status: post.status, body: await post.json() }).to.deep.equal(bad('invalid request body'));
  });

  it('runs the spec sequence to a ledger line', async () => {
    const amountIn = 100_000_000_000_000_000n; // 0.1 ETH
    // 1. quotes over SSE: events in any order, done last
    const stream = await readSse(`${gateway}/api/v2/quote/stream?src_token_id=101&dst_token_id=1001&amount_in=${amountIn}&slippage=0.01`);
    expect(stream.status).to.equal(200);
    expect(stream.contentType).to.equal('text/event-stream; charset=utf-8');
    expect(stream.events.at(-1)).to.deep.equal({ event: 'done', data: {} });
    const quotes = stream.events.filter((e) => e.event === 'channel').map((e) => e.data as { channel_id: number; estimated_out_str: string });
    expect(quotes.length).to.be.greaterThan(0);
    const validate = contracts.validator('http/agg/channel-quote');
    for (const q of quotes) expect(validate(q), JSON.stringify(validate.errors)).to.equal(true);
    // 0.1 ETH at 2000 USD is 0.004 BTC at 50000 USD = 400000 sat. ChangeNOW's stand-in keeps
    // 0.5 % (398000) and its channel fee is 0.3 % of the input: 398000 × 0.997 = 396806.
    // THORChain's stand-in keeps 0.35 % (398600) and Bitcoin's outbound fee, 15000 sat at its
    // starting 10 sat/vB (383600), and its channel fee is 0.2 %: 382832.8 → 382832.
    expect(quotes.find((q) => q.channel_id === 1)).to.include({ estimated_out_str: '396806', channel_fee: 0.3, promo_applied: false });
    expect(quotes.find((q) => q.channel_id === 2)).to.include({ estimated_out_str: '382832', channel_fee: 0.2, promo_applied: false });

    // 2. THORChain's channel and its minimum: an integrator may choose any quoted channel, and this
    // sequence follows THORChain's (ChangeNOW's estimate is the larger one since THORChain charges
    // Bitcoin's outbound fee)
    const best = quotes.find((q) => q.channel_id === 2)!;
    const minOut = (BigInt(best.estimated_out_str) * 99n) / 100n;

    // 3. the order
    const indexBefore = await matcherIndexSize();
    expect(Number.isFinite(indexBefore), 'the matcher reports its index size').to.equal(true);
    const created = await fetch(`${gateway}/api/v1/integrator/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-integrator-api-key': key },
      body: JSON.stringify({
        src_token_id: 101, dst_token_id: 1001, amount_in: amountIn.toString(), dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
        chosen_channel_id: best.channel_id, slippage: 0.01, main_channel_estimated_out_amount: best.estimated_out_str, min_acceptable_out_amount: minOut.toString(),
        channels: quotes, client_order_id: `e2e-${randomBytes(3).toString('hex')}`,
      }),
    });
    const order = ((await created.json()) as { code: number; data: { order_no: string; deposit_address: string; deposit_memo: string | null; fee_integrator: string } }).data;
    expect(created.status).to.equal(200);
    // The user pays the order's own platform address with a plain transfer; THORChain's shared
    // vault and the memo naming the swap are the forward's
    expect(order.deposit_memo).to.equal(null);
    expect(order.fee_integrator, '0.5 % of 0.1 ETH').to.equal('500000000000000');

    // 4. the user pays the deposit address on the simulated chain, once the matcher (which learns
    // the address on another topic) has it: a transaction before that would pay nobody, as on a
    // real chain
    const orders = new OrderRepository(db);
    const stored = (await orders.findByNo(order.order_no))!;
    expect(stored).to.include({ forward_memo: '=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' });
    expect(stored.forward_address).to.not.equal(order.deposit_address);
    await waitFor(async () => (await matcherIndexSize()) > indexBefore, { timeoutMs: 30_000, what: 'the matcher knows the deposit address' });
    const rpc = async (method: string, params: unknown[]) => {
      const res = await fetch(`${sim}/rpc/ethereum-mainnet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      return ((await res.json()) as { result: any }).result;
    };
    const nonce = Number(await rpc('eth_getTransactionCount', [payer.address, 'pending']));
    const paid: string = await rpc('eth_sendRawTransaction', [
      await payer.signTransaction({ chainId: 1, type: 'eip1559', to: order.deposit_address as Hex, value: amountIn, nonce, gas: 21_000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') }),
    ]);

    // 5. the platform forwards the net amount to THORChain's vault; THORChain swaps it by itself
    await waitFor(async () => (await orders.findById(stored.id))?.state === 'Settled', { timeoutMs: 90_000, what: 'order Settled' });
    const settled = (await orders.findById(stored.id))!;
    const forward = await rpc('eth_getTransactionByHash', [settled.forward_tx_hash]);
    expect(forward.from).to.equal(order.deposit_address);
    expect(BigInt(forward.value), 'amount_in − fee_platform − fee_integrator').to.equal(amountIn - BigInt(settled.fee_platform) - BigInt(settled.fee_integrator));
    const observed = ((await (await fetch(`${sim}/sim/thorchain/observed`)).json()) as { hash: string; outHash: string; outcome: string }[]).find((s) => `0x${s.hash.toLowerCase()}` === settled.forward_tx_hash);
    expect(observed?.outcome).to.equal('done');
    const payoutHash = observed!.outHash;

    // 6. what the integrator sees, and the commission in its balance
    const read = await fetch(`${gateway}/api/v1/integrator/orders/${order.order_no}`, { headers: { 'x-integrator-api-key': key } });
    const detail = ((await read.json()) as { data: Record<string, unknown> }).data;
    expect(detail).to.include({ state: 'Settled', payout_tx_hash: payoutHash, deposit_amount: amountIn.toString(), deposit_tx_hash: paid, forward_tx_hash: settled.forward_tx_hash, integrator_id: integratorId });
    expect((await orders.audit(stored.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Depositing'], ['deposit', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
    const line = (await orders.ledgerOf(stored.id))!;
    // 0.0005 ETH at the creation price of 2000 USD = 1 USD
    expect(line).to.include({ integrator_id: integratorId, token_id: 101, amount: '500000000000000', state: 'Available' });
    expect(Number(line.amount_usd)).to.equal(1);
  });

  it('a Solana order: its deposit address from the signing service, the SOL payment seen through the stream, parser, matcher and tracker, forwarded to ChangeNOW, Settled', async () => {
    const amountIn = 2_000_000_000n; // 2 SOL = 200 USD
    const stream = await readSse(`${gateway}/api/v2/quote/stream?src_token_id=801&dst_token_id=1001&amount_in=${amountIn}&slippage=0.01`);
    const quotes = stream.events.filter((e) => e.event === 'channel').map((e) => e.data as { channel_id: number; estimated_out_str: string });
    // THORChain lists no Solana: ChangeNOW's estimate alone
    const changenow = quotes.find((q) => q.channel_id === 1)!;
    expect(quotes.map((q) => q.channel_id)).to.deep.equal([1]);
    const minOut = (BigInt(changenow.estimated_out_str) * 99n) / 100n;
    const indexBefore = await matcherIndexSize();
    const created = await fetch(`${gateway}/api/v1/integrator/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-integrator-api-key': key },
      body: JSON.stringify({
        src_token_id: 801, dst_token_id: 1001, amount_in: amountIn.toString(), dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
        chosen_channel_id: 1, slippage: 0.01, main_channel_estimated_out_amount: changenow.estimated_out_str, min_acceptable_out_amount: minOut.toString(), channels: quotes,
      }),
    });
    const body = (await created.json()) as { data: { order_no: string; deposit_address: string } };
    expect(created.status, JSON.stringify(body)).to.equal(200);
    const orders = new OrderRepository(db);
    const stored = (await orders.findByNo(body.data.order_no))!;
    expect(stored.deposit_address).to.equal(await new MnemonicSigner(TEST_KEY_MNEMONIC).addressAt('svm', stored.deposit_index!));
    await waitFor(async () => (await matcherIndexSize()) > indexBefore, { timeoutMs: 30_000, what: 'the matcher knows the deposit address' });

    const solana = simSolana(() => sim);
    const paid = await solana.pay(solWallet, solPayer, stored.deposit_address, amountIn);
    await waitFor(async () => (await orders.findById(stored.id))?.state === 'Settled', { timeoutMs: 90_000, what: 'order Settled' });
    const settled = (await orders.findById(stored.id))!;
    expect(settled).to.include({ deposit_tx_hash: paid, deposit_amount: amountIn.toString() });
    const net = amountIn - BigInt(settled.fee_platform) - BigInt(settled.fee_integrator);
    const forward = await solana.rpc('getTransaction', [settled.forward_tx_hash, { encoding: 'json' }]);
    const keys = forward.transaction.message.accountKeys as string[];
    const payin = (settled.execution as Record<string, string>).payin_address;
    expect(keys[0]).to.equal(stored.deposit_address);
    expect(BigInt(forward.meta.postBalances[keys.indexOf(payin)]) - BigInt(forward.meta.preBalances[keys.indexOf(payin)]), 'amount_in − fee_platform − fee_integrator').to.equal(net);
    expect((await orders.audit(stored.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Depositing'], ['deposit', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
  });

  it('a TRX order: paid on the simulated Tron, seen through the pipeline, forwarded through ChangeNOW (no Tron vault on THORChain), Settled', async () => {
    const amountIn = 400_000_000n; // 400 TRX
    const stream = await readSse(`${gateway}/api/v2/quote/stream?src_token_id=901&dst_token_id=1001&amount_in=${amountIn}&slippage=0.01`);
    const quotes = stream.events.filter((e) => e.event === 'channel').map((e) => e.data as { channel_id: number; estimated_out_str: string });
    expect(quotes.map((q) => q.channel_id), 'ChangeNOW only').to.deep.equal([1]);
    const [best] = quotes;
    const indexBefore = await matcherIndexSize();
    const created = await fetch(`${gateway}/api/v1/integrator/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-integrator-api-key': key },
      body: JSON.stringify({
        src_token_id: 901, dst_token_id: 1001, amount_in: amountIn.toString(), dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
        chosen_channel_id: 1, slippage: 0.01, main_channel_estimated_out_amount: best.estimated_out_str, min_acceptable_out_amount: ((BigInt(best.estimated_out_str) * 99n) / 100n).toString(),
        channels: quotes, client_order_id: `e2e-trx-${randomBytes(3).toString('hex')}`,
      }),
    });
    expect(created.status).to.equal(200);
    const order = ((await created.json()) as { data: { order_no: string; deposit_address: string } }).data;
    expect(order.deposit_address).to.match(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    await waitFor(async () => (await matcherIndexSize()) > indexBefore, { timeoutMs: 30_000, what: 'the matcher knows the Tron deposit address' });
    const paid = await tron.pay(tronPayer, order.deposit_address, amountIn);

    const orders = new OrderRepository(db);
    const stored = (await orders.findByNo(order.order_no))!;
    await waitFor(async () => (await orders.findById(stored.id))?.state === 'Settled', { timeoutMs: 90_000, what: 'the TRX order Settled' });
    const settled = (await orders.findById(stored.id))!;
    expect(settled.deposit_amount).to.equal(amountIn.toString());
    expect(settled.deposit_tx_hash!.replace(/^0x/, '')).to.equal(paid);
    const forward = await tron.wallet('gettransactionbyid', { value: settled.forward_tx_hash!.replace(/^0x/, ''), visible: true });
    expect(forward.raw_data.contract[0].parameter.value).to.deep.equal({
      owner_address: order.deposit_address, to_address: (settled.execution as Record<string, string>).payin_address, amount: Number(amountIn - BigInt(settled.fee_platform) - BigInt(settled.fee_integrator)),
    });
    expect((await orders.audit(stored.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Depositing'], ['deposit', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
  });

  it("the metrics every app here exposes are the ones the source scan finds (deploy.test.ts' metric table), with their types", async () => {
    const scanned = await scannedMetricTypes();
    expect(opsPorts.size).to.equal(7);
    for (const [entry, port] of opsPorts) {
      const { types } = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
      for (const [name, type] of types) expect(scanned.get(name), `${name} exposed by ${entry}`).to.equal(type);
    }
  });
});
