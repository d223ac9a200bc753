import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Registry } from 'prom-client';
import { networkByName, parseChainOrigins } from '@chainpipe/chains';
import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import { createKeyResolver, generateApiKey, listen } from '@chainpipe/http';
import { SecretBox, createLogger } from '@chainpipe/runtime';
import { readFixtureJson } from '@chainpipe/testing';
import { parseEvmPayload, type NormalizedTx } from '@chainpipe/tx-parsers';
import { createTxGatewayApp } from '../apps/tx-gateway/src/app';
import { historySql } from '../apps/tx-gateway/src/queries/repository';
import { normalizeSearch, type HistoryQuery } from '../apps/tx-gateway/src/queries/request';
import { latencyStats, machine, sustained } from './lib-stats';

/**
 * POST /tx/api/v1/transfers/search on a 1M-transaction history of one address, through the real
 * tx-gateway express app (auth, validation, normalisation, keyset SQL, formatting), next to a raw
 * baseline in the same run: a bare node:http handler running the same SQL text with pg and
 * answering the same records. Page 1 and page 1000 (cursor = the id after 999 pages): keyset
 * pagination must make them cost the same. Also prints the plans of the per-chain query and of
 * the cross-chain query with a token filter (both must walk an address index in tx_id order).
 *
 * Uses a database of its own (BENCH_SEARCH_DATABASE_URL, default chainpipe_bench_search: not the
 * parse benchmark's chainpipe_bench, whose tx tables that benchmark truncates) and truncates its
 * tx tables. About 70 s on 2 cores, most of it the fill.
 */

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 1_000_000);
const LIMIT = 20;
/** Measured time per query and path, split into alternating rounds. */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
const ROUNDS = 4;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const COUNTERPARTIES = 50_000;

/** A realistic stored record: a real ERC-20 transfer of block 17053184, re-addressed to the bench address. */
function templateRecord(address: string): NormalizedTx {
  const block = readFixtureJson('evm/eth-mainnet-17053184.block_fulltx.json');
  const receipts = readFixtureJson('evm/eth-mainnet-17053184.receipts.json');
  const eth = networkByName('ethereum-mainnet')!;
  const parsed = parseEvmPayload([{ block, receipts }], { chainType: eth.chainType, chainId: eth.chainId, family: eth.family, nativeSymbol: eth.nativeSymbol, nativeDecimals: eth.nativeDecimals });
  const tx = parsed.blocks[0].transactions.find((t) => t.transfer_type === 'token' && t.token_transfers.length === 1)!;
  return { ...tx, sender: address, token_transfers: [{ ...tx.token_transfers[0], from_address: address }] };
}

async function fill(db: Knex, address: string, token: string): Promise<number> {
  const started = Date.now();
  await db.raw('truncate tx.address_index, tx.transactions restart identity cascade');
  const template = templateRecord(address);
  // ids follow generate_series order (id = g). Each row differs from the template in its hash,
  // counterparty and type; overriding more keys per row costs seconds per million rows.
  await db.transaction(async (trx) => {
    await trx.raw('set local synchronous_commit = off');
    await trx.raw(
      `insert into tx.transactions (chain_type, chain_id, network, tx_hash, block_hash, height, tx_index, tx_time, tx_status, record)
       select 'ethereum', 1, 'ethereum-mainnet', h.tx_hash, h.block_hash, h.height, h.tx_index, h.tx_time, 'success',
              t.record || jsonb_build_object('tx_hash', h.tx_hash, 'receiver', h.cp, 'transfer_type', case when h.g % 4 = 0 then 'token' else 'native' end)
       from (select ?::jsonb as record) t,
            (select g, '0x' || lpad(to_hex(g), 64, '0') as tx_hash, '0x' || lpad(to_hex(g / 150), 64, 'b') as block_hash,
                    17000000 + g / 150 as height, g % 150 as tx_index, 1680000000 + (g / 150) * 12 as tx_time,
                    '0x' || lpad(to_hex(g % ?), 40, 'c') as cp
             from generate_series(1, ?) g) h`,
      [JSON.stringify(template), COUNTERPARTIES, ROWS],
    );
  });
  // The bench address is in every transaction (moving the token in every 4th); each counterparty
  // in every 50 000th. Rows go in in index order, and the foreign-key check is skipped (this
  // session only, bench database only): the ids come from the table they reference.
  for (const insert of [
    `select ?, 'ethereum', 1, id, case when id % 4 = 0 then array[?]::text[] else '{}'::text[] end from tx.transactions order by id`,
    `select '0x' || lpad(to_hex(id % ?), 40, 'c'), 'ethereum', 1, id, '{}'::text[] from tx.transactions order by 1, 4`,
  ]) {
    await db.transaction(async (trx) => {
      await trx.raw('set local synchronous_commit = off');
      await trx.raw('set local session_replication_role = replica');
      await trx.raw(`insert into tx.address_index (address, chain_type, chain_id, tx_id, tokens) ${insert}`, insert.startsWith('select ?') ? [address, token] : [COUNTERPARTIES]);
    });
  }
  // Statistics for the planner, and the visibility map for index-only scans (also keeps
  // autovacuum from starting in the middle of the measurements).
  await db.raw('vacuum analyze tx.address_index');
  await db.raw('vacuum analyze tx.transactions');
  return Date.now() - started;
}

/** The plan of a history query, with the index scans it uses. */
async function explain(db: Knex, q: HistoryQuery): Promise<{ ms: number; indexes: string[]; sorts: number; seqScans: string[] }> {
  const { sql, bindings } = historySql(q);
  const { rows } = await db.raw<{ rows: { 'QUERY PLAN': unknown }[] }>(`explain (analyze, format json) ${sql}`, bindings);
  const plan = (rows[0]['QUERY PLAN'] as { Plan: Json; 'Execution Time': number }[])[0];
  const indexes: string[] = [];
  const seqScans: string[] = [];
  let sorts = 0;
  const walk = (node: Json) => {
    if (node['Index Name']) indexes.push(`${node['Node Type']} ${node['Scan Direction'] ?? ''} ${node['Index Name']}`.replace(/\s+/g, ' '));
    if (node['Node Type'] === 'Seq Scan') seqScans.push(node['Relation Name']);
    if (node['Node Type'] === 'Sort' && node['Actual Rows'] > LIMIT * 10) sorts += 1;
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan.Plan);
  return { ms: plan['Execution Time'], indexes: [...new Set(indexes)], sorts, seqScans };
}
type Json = any;

/** The raw baseline: node:http + pg running the same statement, same JSON answer, nothing else. */
async function rawServer(url: string, sqlFor: (body: Json) => { sql: string; values: unknown[] }): Promise<{ url: string; close: () => Promise<void>; pool: pg.Pool }> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      try {
        const { sql, values } = sqlFor(JSON.parse(body));
        const { rows } = await pool.query(sql, values);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ code: 1, msg: 'success', data: rows.map((r) => ({ id: Number(r.id), ...r.record })) }));
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    pool,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

export async function run(): Promise<void> {
  const url = process.env.BENCH_SEARCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench_search';
  if (!/bench/.test(new URL(url).pathname)) throw new Error('BENCH_SEARCH_DATABASE_URL must name a database with "bench" in its name: this benchmark truncates tx tables');
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 10, applicationName: 'bench-search' });
  await migrateLatest(db);

  const address = '0x' + 'be'.repeat(20);
  const token = '0x' + 'dac17f958d2ee523a2206206994597c13d831ec7';
  const fillMs = await fill(db, address, token);
  console.log(`machine: ${machine()}; filled ${ROWS.toLocaleString('en')} transactions (${(2 * ROWS).toLocaleString('en')} index rows) in ${(fillMs / 1000).toFixed(1)} s; limit ${LIMIT}; concurrency ${CONCURRENCY}; ${DURATION_MS / 1000} s per query and path in ${ROUNDS} alternating rounds`);

  // Cursor of page 1000: the id of the last record of page 999 (OFFSET here only, to find it).
  const { rows: cur } = await db.raw<{ rows: { tx_id: string }[] }>(
    `select tx_id from tx.address_index where address = ? and chain_type = 'ethereum' and chain_id = 1 order by tx_id desc offset ? limit 1`,
    [address, 999 * LIMIT - 1],
  );
  const page1000Cursor = cur[0].tx_id;

  const keys = new ApiKeyRepository(db);
  const appId = `bench-${randomBytes(3).toString('hex')}`;
  await keys.createApp(appId, 'search bench');
  const key = generateApiKey();
  await keys.addKey(appId, key.keyId, key.secretHash, 'bench');

  const app = createTxGatewayApp({
    db,
    contracts: loadContracts(),
    producer: { publish: async () => Promise.reject(new Error('the search benchmark publishes nothing')) },
    logger: createLogger({ name: 'bench-search', level: 'warn' }),
    registry: new Registry(),
    resolveKey: createKeyResolver((keyId) => keys.findKey(keyId)),
    origins: parseChainOrigins('', null),
    rpcTimeoutMs: 1_000,
    secretBox: new SecretBox(randomBytes(32).toString('hex')),
    allowPrivateWebhookTargets: false,
    now: Date.now,
    timeoutMs: 15_000,
    bodyLimitBytes: 1024 * 1024,
  });
  const gateway = await listen(app, 0, '127.0.0.1');
  const gatewayUrl = `http://127.0.0.1:${gateway.address.port}/tx/api/v1/transfers/search`;

  // The raw handler runs exactly the SQL text the gateway sends (knex `?` → pg `$n`).
  const sqlFor = (body: Json) => {
    const n = normalizeSearch(body);
    if (!n.ok) throw new Error(n.error);
    const native = db.raw(historySql(n.value).sql, historySql(n.value).bindings).toSQL().toNative();
    return { sql: native.sql, values: native.bindings as unknown[] };
  };
  const raw = await rawServer(url, sqlFor);

  const bodies = {
    'page 1': { address, chain_type: 'ethereum', chain_id: 1, limit: LIMIT },
    'page 1000': { address, chain_type: 'ethereum', chain_id: 1, limit: LIMIT, id: Number(page1000Cursor) },
  };

  // Both must answer the same records before anything is timed.
  for (const body of Object.values(bodies)) {
    const a = (await (await fetch(gatewayUrl, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-api-key': key.token } })).json()) as Json;
    const b = (await (await fetch(raw.url, { method: 'POST', body: JSON.stringify(body) })).json()) as Json;
    const ids = (x: Json) => x.data.map((r: Json) => r.id).join(',');
    if (a.data?.length !== LIMIT || ids(a) !== ids(b)) throw new Error(`gateway and raw baseline disagree: ${JSON.stringify(a).slice(0, 300)}`);
  }

  const rows: Record<string, string | number>[] = [];
  const ratios: string[] = [];
  for (const [label, body] of Object.entries(bodies)) {
    const payload = JSON.stringify(body);
    const measure = (target: string, headers: Record<string, string>, durationMs: number) =>
      sustained(
        async () => {
          const res = await fetch(target, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', ...headers } });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`status ${res.status}`);
        },
        { concurrency: CONCURRENCY, durationMs, warmupMs: 300 },
      );
    // Alternating short rounds, so that background noise (checkpoints, caches) hits both alike.
    const app = { latencies: [] as number[], errors: 0 };
    const base = { latencies: [] as number[], errors: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [into, target, headers] of [
        [app, gatewayUrl, { 'x-api-key': key.token }],
        [base, raw.url, {}],
      ] as const) {
        const r = await measure(target, headers, DURATION_MS / ROUNDS);
        into.latencies.push(...r.latencies);
        into.errors += r.errors;
      }
    }
    const a = latencyStats(app.latencies);
    const b = latencyStats(base.latencies);
    rows.push(
      { query: label, path: 'tx-gateway (express)', requests: a.count, errors: app.errors, 'p50 ms': +a.p50.toFixed(2), 'p99 ms': +a.p99.toFixed(2) },
      { query: label, path: 'raw node:http + pg', requests: b.count, errors: base.errors, 'p50 ms': +b.p50.toFixed(2), 'p99 ms': +b.p99.toFixed(2) },
    );
    ratios.push(`${label}: gateway/raw p50 ${(a.p50 / b.p50).toFixed(2)}x, p99 ${(a.p99 / b.p99).toFixed(2)}x`);
  }
  console.table(rows);
  for (const r of ratios) console.log(`ratio ${r}`);
  const p = (label: string) => rows.find((r) => r.query === label && String(r.path).startsWith('tx-gateway'))!['p50 ms'] as number;
  console.log(`ratio page 1000 / page 1 (gateway p50): ${(p('page 1000') / p('page 1')).toFixed(2)}x`);

  // Plans: the index each history shape walks, on this 1M-row history.
  const plans: Record<string, HistoryQuery> = {};
  const q = (body: Json) => {
    const n = normalizeSearch(body);
    if (!n.ok) throw new Error(n.error);
    return n.value;
  };
  plans['per chain, page 1000'] = q(bodies['page 1000']);
  plans['chain_type only'] = q({ address, chain_type: 'ethereum', limit: LIMIT, id: page1000Cursor });
  plans['all chains + token, page 1000'] = q({ address, token, limit: LIMIT, id: page1000Cursor });
  plans['per chain + tx_type token'] = q({ address, chain_type: 'ethereum', chain_id: 1, tx_type: 'token', limit: LIMIT });
  // Worst case: a filter nothing matches walks the whole history (no index on tokens or type).
  plans['worst: token never moved'] = q({ address, chain_type: 'ethereum', chain_id: 1, token: '0x' + '11'.repeat(20), limit: LIMIT });
  plans['worst: tx_type never seen'] = q({ address, chain_type: 'ethereum', chain_id: 1, tx_type: 'system', limit: LIMIT });
  for (const [label, query] of Object.entries(plans)) {
    const e = await explain(db, query);
    console.log(`plan ${label}: ${e.ms.toFixed(2)} ms; ${e.indexes.join(' | ')}${e.seqScans.length ? `; SEQ SCAN on ${e.seqScans.join(', ')}` : ''}${e.sorts ? `; ${e.sorts} large sort(s)` : ''}`);
  }

  await raw.close();
  await gateway.close();
  await db.destroy();
}

if (require.main === module) {
  run().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
