import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Registry } from 'prom-client';
import { networkByName, parseChainOrigins } from '@chainpipe/chains';
import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import { createKeyResolver, generateApiKey, listen } from '@chainpipe/http';
import { SecretBox, createLogger, systemClock } from '@chainpipe/runtime';
import { readFixtureJson } from '@chainpipe/testing';
import { parseEvmPayload, type NormalizedTx } from '@chainpipe/tx-parsers';
import { createTxGatewayApp, txGatewayModules, normalizeMultiChain, normalizeSearch } from '@chainpipe/tx-gateway';
import { chainsSql, historySql, withChainKeys, type ChainKeyRow, type HistoryQuery } from '@chainpipe/tx-store';
import { latencyStats, machine, sustained } from './lib-stats';

/**
 * POST /tx/api/v1/transfers/search on a 1M-transaction history of one address, through the real
 * tx-gateway express app (auth, validation, normalisation, keyset SQL, formatting), next to a raw
 * baseline in the same run: a bare node:http handler running the same SQL texts with pg (the
 * chains statement first where the gateway needs one) and answering the same records. Timed:
 * page 1 and page 1000 (cursor = the id after 999 pages), which keyset pagination must make cost
 * the same, and the `tx_type` and `token` filters matching nothing, per chain and across chains
 * (the worst case of a filter: every walk comes back empty).
 * Then EXPLAIN ANALYZE of every query shape (per chain, one chain filter, all chains, multi-chain;
 * with and without tx_type/token; page 1, deep pages, matching nothing), with the indexes each
 * uses and the rows its scans read: no shape may read more than a few pages' worth (the run
 * fails otherwise), and each answer is checked against a row-by-row reference query.
 *
 * History: 999,000 ethereum transactions and 1,000 bsc ones (every 1000th), the address in all of
 * them, moving a token in every 4th (transfer_type `token`, else `native`), rows as tx-store
 * writes them (tx.address_index with transfer_type, tx.address_token_index).
 *
 * Uses a database of its own (BENCH_SEARCH_DATABASE_URL, default chainpipe_bench_search: not the
 * parse benchmark's chainpipe_bench, whose tx tables that benchmark truncates) and truncates its
 * tx tables. About 3 minutes on 2 cores, a third of it the fill (BENCH_SEARCH_KEEP_FILL=1 keeps
 * a whole history of an earlier run instead); BENCH_SEARCH_ROUNDS sets the alternating rounds.
 */

const ROWS = Number(process.env.BENCH_SEARCH_ROWS ?? 1_000_000);
const LIMIT = 20;
/** Measured time per query and path, split into alternating rounds. */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_SEARCH_ROUNDS ?? 4);
/** Keep the history of an earlier run of this bench when it is whole (BENCH_SEARCH_KEEP_FILL=1): the fill is most of a run. */
const KEEP_FILL = process.env.BENCH_SEARCH_KEEP_FILL === '1';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const COUNTERPARTIES = 50_000;
/** Rows one page's scans may read: keys × LIMIT with room to spare, far below any history's size. */
const MAX_ROWS_READ = 2_000;

/** A realistic stored record: a real ERC-20 transfer of block 17053184, re-addressed to the bench address. */
function templateRecord(address: string): NormalizedTx {
  const block = readFixtureJson('evm/eth-mainnet-17053184.block_fulltx.json');
  const receipts = readFixtureJson('evm/eth-mainnet-17053184.receipts.json');
  const eth = networkByName('ethereum-mainnet')!;
  const parsed = parseEvmPayload([{ block, receipts }], { chainType: eth.chainType, chainId: eth.chainId, family: eth.family, nativeSymbol: eth.nativeSymbol, nativeDecimals: eth.nativeDecimals });
  const tx = parsed.blocks[0].transactions.find((t) => t.transfer_type === 'token' && t.token_transfers.length === 1)!;
  return { ...tx, sender: address, token_transfers: [{ ...tx.token_transfers[0], from_address: address }] };
}

/** The bench history's transfer_type of generate_series value `g` (= its id). */
const TYPE_OF_G = `case when g % 4 = 0 then 'token' else 'native' end`;

async function fill(db: Knex, address: string, token: string): Promise<number> {
  const started = Date.now();
  await db.raw('truncate tx.address_token_index, tx.address_index, tx.transactions restart identity cascade');
  const template = templateRecord(address);
  // ids follow generate_series order (id = g). Each row differs from the template in its hash,
  // counterparty, type and chain; overriding more keys per row costs seconds per million rows.
  await db.transaction(async (trx) => {
    await trx.raw('set local synchronous_commit = off');
    await trx.raw(
      `insert into tx.transactions (chain_type, chain_id, network, tx_hash, block_hash, height, tx_index, tx_time, tx_status, record)
       select h.chain_type, h.chain_id, h.network, h.tx_hash, h.block_hash, h.height, h.tx_index, h.tx_time, 'success',
              t.record || jsonb_build_object('tx_hash', h.tx_hash, 'receiver', h.cp, 'transfer_type', ${TYPE_OF_G}, 'chain_type', h.chain_type, 'chain_id', h.chain_id)
       from (select ?::jsonb as record) t,
            (select g, '0x' || lpad(to_hex(g), 64, '0') as tx_hash, '0x' || lpad(to_hex(g / 150), 64, 'b') as block_hash,
                    17000000 + g / 150 as height, g % 150 as tx_index, 1680000000 + (g / 150) * 12 as tx_time,
                    '0x' || lpad(to_hex(g % ?), 40, 'c') as cp,
                    case when g % 1000 = 500 then 'bsc' else 'ethereum' end as chain_type,
                    case when g % 1000 = 500 then 56 else 1 end as chain_id,
                    case when g % 1000 = 500 then 'bsc-mainnet' else 'ethereum-mainnet' end as network
             from generate_series(1, ?) g) h`,
      [JSON.stringify(template), COUNTERPARTIES, ROWS],
    );
  });
  // The bench address is in every transaction (moving the token in every 4th); each counterparty
  // in every 50 000th. Rows go in in index order, and the foreign-key check is skipped (this
  // session only, bench database only): the ids come from the table they reference.
  const TYPE_OF_ID = TYPE_OF_G.replace(/\bg\b/g, 'id');
  for (const [insert, bindings] of [
    [
      `insert into tx.address_index (address, chain_type, chain_id, tx_id, tokens, transfer_type)
       select ?, chain_type, chain_id, id, case when id % 4 = 0 then array[?]::text[] else '{}'::text[] end, ${TYPE_OF_ID} from tx.transactions order by id`,
      [address, token],
    ],
    [
      `insert into tx.address_index (address, chain_type, chain_id, tx_id, tokens, transfer_type)
       select '0x' || lpad(to_hex(id % ?), 40, 'c'), chain_type, chain_id, id, '{}'::text[], ${TYPE_OF_ID} from tx.transactions order by 1, 2, 3, 4`,
      [COUNTERPARTIES],
    ],
    [
      `insert into tx.address_token_index (address, token, chain_type, chain_id, tx_id, transfer_type)
       select ?, ?, chain_type, chain_id, id, ${TYPE_OF_ID} from tx.transactions where id % 4 = 0 order by chain_type, chain_id, id`,
      [address, token],
    ],
  ] as const) {
    await db.transaction(async (trx) => {
      await trx.raw('set local synchronous_commit = off');
      await trx.raw('set local session_replication_role = replica');
      await trx.raw(insert, [...bindings]);
    });
  }
  // The fill must be what tx-store writes: index columns equal to the records'.
  const { rows: bad } = await db.raw<{ rows: { n: string }[] }>(
    `select count(*) as n from tx.address_index a join tx.transactions t on t.id = a.tx_id
     where a.tx_id % 997 = 0 and (a.transfer_type is distinct from t.record->>'transfer_type' or a.chain_type <> t.chain_type)`,
  );
  if (bad[0].n !== '0') throw new Error(`bench fill: ${bad[0].n} index rows disagree with their records`);
  // Statistics for the planner, and the visibility map for index-only scans (also keeps
  // autovacuum from starting in the middle of the measurements).
  await db.raw('vacuum analyze tx.address_index');
  await db.raw('vacuum analyze tx.address_token_index');
  await db.raw('vacuum analyze tx.transactions');
  return Date.now() - started;
}

/** What EXPLAIN ANALYZE says of one history page (both statements when chains are found first). */
interface PlanSummary {
  ms: number;
  rows: number;
  indexes: string[];
  sorts: number;
  seqScans: string[];
  jit: boolean;
}

/**
 * The plan of a history page: the indexes it walks, and how many rows its scans read (index
 * entries returned or filtered out, times loops): a walk of the whole history shows up there.
 */
async function explain(db: Knex, q: HistoryQuery): Promise<PlanSummary> {
  const out: PlanSummary = { ms: 0, rows: 0, indexes: [], sorts: 0, seqScans: [], jit: false };
  const one = async (sql: string, bindings: Knex.RawBinding[]) => {
    const { rows } = await db.raw<{ rows: { 'QUERY PLAN': unknown }[] }>(`explain (analyze, format json) ${sql}`, bindings);
    const plan = (rows[0]['QUERY PLAN'] as { Plan: Json; 'Execution Time': number; JIT?: unknown }[])[0];
    const walk = (node: Json) => {
      if (node['Index Name']) out.indexes.push(`${node['Node Type']} ${node['Scan Direction'] ?? ''} ${node['Index Name']}`.replace(/\s+/g, ' '));
      if (/Scan$/.test(node['Node Type']) && node['Relation Name']) {
        out.rows += ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1);
      }
      if (node['Node Type'] === 'Seq Scan') out.seqScans.push(node['Relation Name']);
      if (node['Node Type'] === 'Sort' && node['Actual Rows'] > LIMIT * 10) out.sorts += 1;
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan.Plan);
    out.ms += plan['Execution Time'];
    out.jit ||= plan.JIT !== undefined;
  };
  let query = q;
  const chains = chainsSql(q);
  if (chains) {
    await one(chains.sql, chains.bindings);
    const { rows } = await db.raw<{ rows: ChainKeyRow[] }>(chains.sql, chains.bindings);
    if (!rows.length) return out;
    query = withChainKeys(q, rows);
  }
  const page = historySql(query);
  await one(page.sql, page.bindings);
  out.rows = Math.round(out.rows);
  out.indexes = [...new Set(out.indexes)];
  return out;
}

/** A history page's ids as the repository reads them (chains first when needed). */
async function pageIds(db: Knex, q: HistoryQuery): Promise<string[]> {
  let query = q;
  const chains = chainsSql(q);
  if (chains) {
    const { rows } = await db.raw<{ rows: ChainKeyRow[] }>(chains.sql, chains.bindings);
    if (!rows.length) return [];
    query = withChainKeys(q, rows);
  }
  const { sql, bindings } = historySql(query);
  return (await db.raw<{ rows: { id: string }[] }>(sql, bindings)).rows.map((r) => r.id);
}
type Json = any;

/**
 * The answer of a history query computed the simple way: each key's rows walked newest first,
 * the filters checked on every row against the record (`transfer_type`) and the `tokens` array.
 */
async function reference(db: Knex, q: HistoryQuery): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `select distinct h.tx_id as id
     from unnest(?::text[], ?::text[], ?::int[]) as k(address, chain_type, chain_id)
     cross join lateral (
       select ai.tx_id from tx.address_index ai join tx.transactions t on t.id = ai.tx_id
       where ai.address = k.address
         and (k.chain_type is null or ai.chain_type = k.chain_type) and (k.chain_id is null or ai.chain_id = k.chain_id)
         and (?::text is null or t.record->>'transfer_type' = ?::text) and (?::text[] is null or ai.tokens && ?::text[])
         and (?::bigint is null or ai.tx_id < ?::bigint) and not t.orphaned
       order by ai.tx_id desc limit ?
     ) h
     order by h.tx_id desc limit ?`,
    [
      q.keys.map((k) => k.address),
      q.keys.map((k) => k.chainType),
      q.keys.map((k) => k.chainId),
      q.transferType,
      q.transferType,
      q.tokens,
      q.tokens,
      q.beforeId,
      q.beforeId,
      q.limit,
      q.limit,
    ] as unknown as Knex.RawBinding[],
  );
  return rows.map((r) => r.id);
}

/** The raw baseline: node:http + pg running the same statements, same JSON answer, nothing else. */
async function rawServer(url: string, pageOf: (body: Json, pool: pg.Pool) => Promise<Json[]>): Promise<{ url: string; close: () => Promise<void>; pool: pg.Pool }> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      try {
        const rows = await pageOf(JSON.parse(body), pool);
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
  const { rows: held } = await db.raw<{ rows: { n: string; top: string | null }[] }>('select count(*) as n, max(id) as top from tx.transactions');
  const whole = held[0].n === String(ROWS) && held[0].top === String(ROWS) && (await db('tx.address_index').where({ address }).first('tx_id')) !== undefined;
  const fillMs = KEEP_FILL && whole ? 0 : await fill(db, address, token);
  console.log(`machine: ${machine()}; ${fillMs ? 'filled' : 'kept'} ${ROWS.toLocaleString('en')} transactions (${(2 * ROWS).toLocaleString('en')} index rows)${fillMs ? ` in ${(fillMs / 1000).toFixed(1)} s` : ' of an earlier run'}; limit ${LIMIT}; concurrency ${CONCURRENCY}; ${DURATION_MS / 1000} s per query and path in ${ROUNDS} alternating rounds`);

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

  const logger = createLogger({ name: 'bench-search', level: 'warn' });
  const registry = new Registry();
  const modules = txGatewayModules({
    db,
    contracts: loadContracts(),
    producer: { publish: async () => Promise.reject(new Error('the search benchmark publishes nothing')) },
    retryWebhooks: async () => Promise.reject(new Error('the search benchmark delivers no webhooks')),
    poolTrades: undefined as never,
    logger,
    registry,
    resolveKey: createKeyResolver((keyId) => keys.findKey(keyId)),
    origins: parseChainOrigins('', null),
    rpcProxy: { origins: parseChainOrigins('', null), maxAnswerBytes: 1024 },
    rpcTimeoutMs: 1_000,
    secretBox: new SecretBox(randomBytes(32).toString('hex')),
    allowPrivateWebhookTargets: false,
    clock: systemClock,
    bodyLimitBytes: 1024 * 1024,
  });
  const app = createTxGatewayApp({ logger, registry, timeoutMs: 15_000, modules });
  const gateway = await listen(app, 0, '127.0.0.1');
  const gatewayUrl = `http://127.0.0.1:${gateway.address.port}/tx/api/v1/transfers/search`;

  // The raw handler runs exactly the SQL texts the gateway sends (knex `?` → pg `$n`).
  const native = (stmt: { sql: string; bindings: Knex.RawBinding[] }) => {
    const n = db.raw(stmt.sql, stmt.bindings).toSQL().toNative();
    return [n.sql, n.bindings as unknown[]] as const;
  };
  const pageOf = async (body: Json, pool: pg.Pool): Promise<Json[]> => {
    const n = normalizeSearch(body);
    if (!n.ok) throw new Error(n.error);
    let query = n.value;
    const chains = chainsSql(query);
    if (chains) {
      const { rows } = await pool.query<ChainKeyRow>(...native(chains));
      if (!rows.length) return [];
      query = withChainKeys(query, rows);
    }
    return (await pool.query(...native(historySql(query)))).rows;
  };
  const raw = await rawServer(url, pageOf);

  const none = { tx_type: 'system', token: '0x' + '11'.repeat(20) }; // never written by the fill
  const perChain = { address, chain_type: 'ethereum', chain_id: 1, limit: LIMIT };
  const allChains = { address, limit: LIMIT };
  const deep = { id: Number(page1000Cursor) };
  /** Timed through both paths; `empty`: the filter matches nothing (every walk comes back empty). */
  const timed: Record<string, { body: Json; empty?: boolean }> = {
    'page 1': { body: perChain },
    'page 1000': { body: { ...perChain, ...deep } },
    'tx_type none, chain': { body: { ...perChain, tx_type: none.tx_type }, empty: true },
    'tx_type none, all chains': { body: { ...allChains, tx_type: none.tx_type }, empty: true },
    'token none, chain': { body: { ...perChain, token: none.token }, empty: true },
    'token none, all chains': { body: { ...allChains, token: none.token }, empty: true },
  };

  // Both must answer the same records before anything is timed.
  for (const [label, { body, empty }] of Object.entries(timed)) {
    const a = (await (await fetch(gatewayUrl, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-api-key': key.token } })).json()) as Json;
    const b = (await (await fetch(raw.url, { method: 'POST', body: JSON.stringify(body) })).json()) as Json;
    const ids = (x: Json) => x.data.map((r: Json) => r.id).join(',');
    if (a.data?.length !== (empty ? 0 : LIMIT) || ids(a) !== ids(b)) throw new Error(`${label}: gateway and raw baseline disagree: ${JSON.stringify(a).slice(0, 300)}`);
  }

  const rows: Record<string, string | number>[] = [];
  const ratios: string[] = [];
  for (const [label, { body }] of Object.entries(timed)) {
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
    const roundRatios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const p50s: number[] = [];
      for (const [into, target, headers] of [
        [app, gatewayUrl, { 'x-api-key': key.token }],
        [base, raw.url, {}],
      ] as const) {
        const r = await measure(target, headers, DURATION_MS / ROUNDS);
        into.latencies.push(...r.latencies);
        into.errors += r.errors;
        p50s.push(latencyStats(r.latencies).p50);
      }
      roundRatios.push(p50s[0] / p50s[1]);
    }
    const a = latencyStats(app.latencies);
    const b = latencyStats(base.latencies);
    rows.push(
      { query: label, path: 'tx-gateway (express)', requests: a.count, errors: app.errors, 'p50 ms': +a.p50.toFixed(2), 'p99 ms': +a.p99.toFixed(2) },
      { query: label, path: 'raw node:http + pg', requests: b.count, errors: base.errors, 'p50 ms': +b.p50.toFixed(2), 'p99 ms': +b.p99.toFixed(2) },
    );
    ratios.push(`${label}: gateway/raw p50 ${(a.p50 / b.p50).toFixed(2)}x, p99 ${(a.p99 / b.p99).toFixed(2)}x; p50 ratio of each round ${roundRatios.map((x) => x.toFixed(2)).join(' ')} (median ${latencyStats(roundRatios).p50.toFixed(2)})`);
  }
  console.table(rows);
  for (const r of ratios) console.log(`ratio ${r}`);
  const p = (label: string) => rows.find((r) => r.query === label && String(r.path).startsWith('tx-gateway'))!['p50 ms'] as number;
  console.log(`ratio page 1000 / page 1 (gateway p50): ${(p('page 1000') / p('page 1')).toFixed(2)}x`);

  // Plans of every history shape on this 1M-row history: the indexes walked and the rows read.
  // Each answer is also checked against a reference query that filters the records row by row
  // (the old way; skipped where nothing matches, as it would walk the whole history).
  const search = (body: Json) => {
    const n = normalizeSearch(body);
    if (!n.ok) throw new Error(n.error);
    return n.value;
  };
  const bsc = { address, chain_type: 'bsc', chain_id: 56, limit: LIMIT };
  const plans: Record<string, { q: HistoryQuery; empty?: boolean }> = {
    'chain, page 1': { q: search(perChain) },
    'chain, page 1000': { q: search({ ...perChain, ...deep }) },
    'chain + tx_type token, page 1': { q: search({ ...perChain, tx_type: 'token' }) },
    'chain + tx_type native, page 1000': { q: search({ ...perChain, ...deep, tx_type: 'native' }) },
    'chain + tx_type none': { q: search({ ...perChain, tx_type: none.tx_type }), empty: true },
    'chain + token, page 1': { q: search({ ...perChain, token }) },
    'chain + token, page 1000': { q: search({ ...perChain, ...deep, token }) },
    'chain + token none': { q: search({ ...perChain, token: none.token }), empty: true },
    'chain + token + tx_type token, page 1000': { q: search({ ...perChain, ...deep, token, tx_type: 'token' }) },
    'chain + token + tx_type native (none)': { q: search({ ...perChain, token, tx_type: 'native' }), empty: true },
    'sparse chain (bsc, 1 in 1000), page 1': { q: search(bsc) },
    'sparse chain + tx_type token, page 1000': { q: search({ ...bsc, ...deep, tx_type: 'token' }) },
    'chain_type only, page 1000': { q: search({ address, chain_type: 'ethereum', limit: LIMIT, ...deep }) },
    'chain_type only, sparse (bsc)': { q: search({ address, chain_type: 'bsc', limit: LIMIT }) },
    'chain_type only, no rows (polygon)': { q: search({ address, chain_type: 'polygon', limit: LIMIT }), empty: true },
    'chain_id only, sparse (56)': { q: search({ address, chain_id: 56, limit: LIMIT }) },
    'all chains, page 1': { q: search(allChains) },
    'all chains, page 1000': { q: search({ ...allChains, ...deep }) },
    'all chains + tx_type token, page 1000': { q: search({ ...allChains, ...deep, tx_type: 'token' }) },
    'all chains + tx_type none': { q: search({ ...allChains, tx_type: none.tx_type }), empty: true },
    'all chains + token, page 1': { q: search({ ...allChains, token }) },
    'all chains + token, page 1000': { q: search({ ...allChains, ...deep, token }) },
    'all chains + token none': { q: search({ ...allChains, token: none.token }), empty: true },
    'all chains + token + tx_type none': { q: search({ ...allChains, token, tx_type: 'contract_call' }), empty: true },
  };
  const multi = normalizeMultiChain({ addresses: [{ chain_type: 'ethereum', chain_id: 1, address: [address] }, { chain_type: 'bsc', chain_id: 56, address: [address] }], limit: LIMIT, ...deep });
  if (!multi.ok) throw new Error(multi.error);
  plans['multi-chain eth + bsc, page 1000'] = { q: multi.value };
  let worst = 0;
  const offenders: string[] = [];
  for (const [label, { q, empty }] of Object.entries(plans)) {
    const e = await explain(db, q);
    worst = Math.max(worst, e.rows);
    // A page walks at most a few keys × LIMIT entries; anything near the history's size is a walk of it.
    if (e.rows > MAX_ROWS_READ || e.seqScans.length || e.sorts || e.jit) offenders.push(label);
    const got = await pageIds(db, q);
    const want = empty ? [] : await reference(db, q);
    if (got.join(',') !== want.join(',') || (!empty && got.length !== LIMIT)) throw new Error(`${label}: answered ${got.length} ids [${got.slice(0, 3)}…], the reference ${want.length} [${want.slice(0, 3)}…]`);
    console.log(
      `plan ${label}: ${e.ms.toFixed(2)} ms, ${e.rows} rows read, ${got.length} answered; ${e.indexes.join(' | ')}${e.seqScans.length ? `; SEQ SCAN on ${e.seqScans.join(', ')}` : ''}${e.sorts ? `; ${e.sorts} large sort(s)` : ''}${e.jit ? '; JIT' : ''}`,
    );
  }
  console.log(`most rows read by one query: ${worst} (the history holds ${ROWS.toLocaleString('en')})`);
  if (offenders.length) throw new Error(`plans that read too much (over ${MAX_ROWS_READ} rows, a seq scan, a large sort or JIT): ${offenders.join('; ')}`);

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
