import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { IMPORT_ID_START, SEED_CHAINS, SEED_FIATS, SEED_TOKENS } from '@chainpipe/price';
import { TOPICS } from '@chainpipe/contracts';
import { REPO_ROOT, createRegistryTopics, stopProcess, testEnv, uniquePrefix } from '@chainpipe/testing';
import { client, createTestKey, expectOk, expectPriceError, startApp, type Started } from './price/support';

/**
 * /price/api/v1 reference endpoints against the real market-gateway process and Postgres:
 * chains, chain lookup, tokens in every mode with pagination, platform search, fiats, auth.
 * Expected values come from the seed (libs/price/src/seed.ts), which the migration inserted.
 */
describe('price API: reference data (market-gateway process, Postgres)', function () {
  const env = testEnv();
  let db: Knex;
  let gw: Started;
  let key = '';
  let revokedKey = '';
  const call = client(() => gw.base, () => key);

  before(async function () {
    this.timeout(60_000);
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    key = await createTestKey(db, 'price-ref');
    revokedKey = await createTestKey(db, 'price-ref-revoked', { revoked: true });
    // The candlestick topics market-gateway reads and writes (the topic script's, never the app's).
    const prefix = uniquePrefix('price-ref');
    await createRegistryTopics(prefix, [TOPICS.klineCandles, TOPICS.klinePools]);
    gw = await startApp('apps/market-gateway/src/main.ts', { KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: `${env.runId}:ref:` });
  });

  after(async function () {
    this.timeout(30_000);
    if (gw) expect(await stopProcess(gw.proc)).to.equal(0);
    await db?.destroy();
  });

  describe('auth (docs/decisions.md#d5)', () => {
    it('answers 401 unauthorized without a key and 403 forbidden with an unknown or revoked one', async () => {
      expectPriceError(await call('GET', '/price/api/v1/chains', { key: null }), 401, 401, 'unauthorized');
      expectPriceError(await call('GET', '/price/api/v1/chains', { key: 'cpk_0000000000000000_' + 'A'.repeat(43) }), 403, 403, 'forbidden');
      expectPriceError(await call('GET', '/price/api/v1/chains', { key: revokedKey }), 403, 403, 'forbidden');
      expectPriceError(await call('GET', '/price/api/v1/chains', { key: 'not-a-key' }), 403, 403, 'forbidden');
    });

    it('answers an unknown price route 404 in the price envelope', async () => {
      expectPriceError(await call('GET', '/price/api/v1/nope'), 404, 404, /no route/);
    });
  });

  describe('GET /chains and /chains/{id_or_name}', () => {
    it('lists every seeded chain with its spec fields, optional ones left out when unknown', async () => {
      const data = expectOk(await call('GET', '/price/api/v1/chains'));
      expect(data.total).to.equal(data.items.length);
      for (const seed of SEED_CHAINS) {
        const item = data.items.find((c: any) => c.id === seed.id);
        expect(item, seed.name).to.include({ id: seed.id, name: seed.name, short_name: seed.short_name, chain_type: seed.chain_type, explorer_url: seed.explorer_url });
        if (seed.chain_id === null) expect(item).not.to.have.property('chain_id');
        else expect(item.chain_id).to.equal(seed.chain_id);
        expect(item.chain_icon_url).to.match(/^https:\/\//);
        expect(Object.keys(item)).to.satisfy((keys: string[]) => keys.every((k) => ['id', 'name', 'short_name', 'chain_id', 'chain_type', 'chain_icon_url', 'explorer_url'].includes(k)));
      }
      // Cosmos Hub has no integer chain id (its id is the string "cosmoshub-4").
      expect(data.items.find((c: any) => c.id === 11)).not.to.have.property('chain_id');
    });

    it('finds a chain by id, by name in any case, and by short name', async () => {
      for (const q of ['2', 'BNB%20Smart%20Chain', 'bnb%20smart%20chain', 'bsc']) {
        const data = expectOk(await call('GET', `/price/api/v1/chains/${q}`));
        expect(data.total, q).to.equal(1);
        expect(data.items[0]).to.include({ id: 2, name: 'BNB Smart Chain', chain_id: 56, chain_type: 'evm' });
      }
    });

    it('answers an unknown chain with HTTP 200, code 20002 and data ""', async () => {
      for (const q of ['999999', 'atlantis']) expectPriceError(await call('GET', `/price/api/v1/chains/${q}`), 200, 20002, 'chain not found');
    });
  });

  describe('GET /tokens', () => {
    it('pages through every active token exactly once (total, page, limit)', async () => {
      const first = expectOk(await call('GET', '/price/api/v1/tokens?limit=7'));
      expect(first.page).to.equal(1);
      expect(first.limit).to.equal(7);
      const total: number = first.total;
      expect(total).to.be.at.least(SEED_TOKENS.length);
      const pages = Math.ceil(total / 7);
      const seen: number[] = [];
      for (let p = 1; p <= pages; p++) {
        const data = expectOk(await call('GET', `/price/api/v1/tokens?page=${p}&limit=7`));
        expect(data.total).to.equal(total);
        expect(data.items.length).to.equal(p < pages ? 7 : total - 7 * (pages - 1));
        seen.push(...data.items.map((t: any) => t.id));
      }
      expect(new Set(seen).size).to.equal(total);
      expect(seen.length).to.equal(total);
      for (const s of SEED_TOKENS) expect(seen).to.include(s.id);
      const past = expectOk(await call('GET', `/price/api/v1/tokens?page=${pages + 1}&limit=7`));
      expect(past.items).to.deep.equal([]);
    });

    it('defaults to page 1 and limit 100, clamps limit to 1000, rejects bad page/limit with 400/20001', async () => {
      const d = expectOk(await call('GET', '/price/api/v1/tokens'));
      expect([d.page, d.limit]).to.deep.equal([1, 100]);
      const c = expectOk(await call('GET', '/price/api/v1/tokens?limit=5000'));
      expect(c.limit).to.equal(1000);
      for (const [q, name] of [['page=0', 'page'], ['page=-1', 'page'], ['page=1.5', 'page'], ['limit=abc', 'limit'], ['limit=0', 'limit']]) {
        expectPriceError(await call('GET', `/price/api/v1/tokens?${q}`), 400, 20001, new RegExp(`^${name} `));
      }
    });

    it('with chain_id only: the native coin of that chain, no pagination', async () => {
      const d = expectOk(await call('GET', '/price/api/v1/tokens?chain_id=8'));
      expect(d).to.deep.include({ total: 1, page: 1, limit: 1 });
      expect(d.items[0]).to.deep.equal({ id: 801, name: 'Solana', symbol: 'SOL', decimals: 9, logo_url: d.items[0].logo_url, chain_id: 8, chain_name: 'Solana', is_native: true });
      const none = expectOk(await call('GET', '/price/api/v1/tokens?chain_id=987654'));
      expect(none).to.deep.equal({ total: 0, page: 1, limit: 0, items: [] });
    });

    it('with chain_id and address: the exact token; EVM addresses in any case', async () => {
      // USDT on Ethereum: 0xdAC17F958D2ee523a2206206994597C13D831ec7, 6 decimals (seed id 102).
      const d = expectOk(await call('GET', '/price/api/v1/tokens?chain_id=1&address=0xDAC17F958D2EE523A2206206994597C13D831EC7'));
      expect(d).to.deep.include({ total: 1, page: 1, limit: 1 });
      expect(d.items[0]).to.include({ id: 102, symbol: 'USDT', decimals: 6, chain_id: 1, chain_name: 'Ethereum', contract_address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', is_native: false });
      // Solana mints are case-sensitive Base58: a lowercased mint is another (non-existent) address.
      expect(expectOk(await call('GET', '/price/api/v1/tokens?chain_id=8&address=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')).items[0].id).to.equal(802);
      expect(expectOk(await call('GET', '/price/api/v1/tokens?chain_id=8&address=epjfwdd5aufqssqem2qn1xzybapc8g4weggkzwytdt1v')).total).to.equal(0);
      expect(expectOk(await call('GET', '/price/api/v1/tokens?chain_id=2&address=0xdAC17F958D2ee523a2206206994597C13D831ec7')).total).to.equal(0);
      expectPriceError(await call('GET', '/price/api/v1/tokens?chain_id=x1'), 400, 20001, 'chain_id must be an integer');
    });

    it('with address only: exact match across every chain (WETH at 0x4200…0006 on OP Mainnet and Base)', async () => {
      const d = expectOk(await call('GET', '/price/api/v1/tokens?address=0x4200000000000000000000000000000000000006'));
      expect(d.items.map((t: any) => t.id)).to.deep.equal([504, 603]);
      expect(d).to.deep.include({ total: 2, page: 1, limit: 2 });
    });
  });

  describe('GET /tokens/platforms/{keyword}', () => {
    it('matches a contract address first, case-insensitively', async () => {
      const d = expectOk(await call('GET', '/price/api/v1/tokens/platforms/0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'));
      expect(d.total).to.equal(1);
      expect(d.items[0]).to.include({ id: 103, symbol: 'USDC', chain_name: 'Ethereum' });
    });

    it('else matches name or symbol exactly, case-insensitively, across chains', async () => {
      const expected = SEED_TOKENS.filter((t) => t.symbol.toLowerCase() === 'usdt' || t.name.toLowerCase() === 'usdt').map((t) => t.id);
      const d = expectOk(await call('GET', '/price/api/v1/tokens/platforms/uSdT'));
      expect(d.items.map((t: any) => t.id).filter((id: number) => id < 100000)).to.deep.equal(expected);
      const byName = expectOk(await call('GET', '/price/api/v1/tokens/platforms/wrapped%20ether'));
      expect(byName.items.map((t: any) => t.id).filter((id: number) => id < 100000)).to.deep.equal(SEED_TOKENS.filter((t) => t.name === 'Wrapped Ether').map((t) => t.id));
      // Exact, not a prefix: "USD" is neither a name nor a symbol of the seed.
      expect(expectOk(await call('GET', '/price/api/v1/tokens/platforms/usd')).items.filter((t: any) => t.id < 100000)).to.deep.equal([]);
    });
  });

  describe('GET /fiats', () => {
    it('lists the ISO fiats with symbol and precision', async () => {
      const d = expectOk(await call('GET', '/price/api/v1/fiats'));
      expect(d.total).to.equal(d.items.length);
      for (const f of SEED_FIATS) expect(d.items.find((i: any) => i.id === f.id), f.code).to.deep.equal({ id: f.id, code: f.code, name: f.name, symbol: f.symbol, precision: f.precision });
      expect(d.items.find((i: any) => i.code === 'JPY').precision).to.equal(0);
    });
  });

  describe('admin reference:import (the command as a process)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'price-import-'));
    const chainName = `Importnet ${env.runId}`;
    const chainId = 2_000_000_000 + randomInt(1_000_000_000);
    const tokenAddress = `0x${randomBytes(20).toString('hex').toUpperCase()}`;
    const admin = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', 'apps/admin/src/main.ts', ...args], { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: env.databaseUrl } }).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
      );

    it('adds a chain and its tokens from JSON and CSV; the API serves them at once; a second import keeps their ids', async function () {
      this.timeout(60_000);
      const json = path.join(dir, 'chain.json');
      writeFileSync(json, JSON.stringify({ chains: [{ name: chainName, short_name: 'IMP', chain_id: chainId, chain_type: 'evm', explorer_url: 'https://explorer.example' }], tokens: [{ chain: chainName, name: 'Import Ether', symbol: 'IETH', decimals: 18 }] }));
      const csv = path.join(dir, 'tokens.csv');
      writeFileSync(csv, `chain,name,symbol,decimals,contract_address,external_id\n"${chainName}","Import Dollar, bridged",IUSD,6,${tokenAddress},825\n`);
      let r = await admin(['reference:import', '--file', json]);
      expect(r.out).to.contain('chains: 1 added, 0 updated').and.contain('tokens: 1 added, 0 updated');
      expect(r.code).to.equal(0);
      r = await admin(['reference:import', '--file', csv, '--kind', 'tokens']);
      expect(r.out).to.contain('tokens: 1 added, 0 updated');

      const chain = expectOk(await call('GET', `/price/api/v1/chains/${encodeURIComponent(chainName.toLowerCase())}`)).items[0];
      expect(chain).to.include({ name: chainName, short_name: 'IMP', chain_id: chainId, chain_type: 'evm' });
      expect(chain.id).to.be.at.least(IMPORT_ID_START.chains);
      const native = expectOk(await call('GET', `/price/api/v1/tokens?chain_id=${chain.id}`)).items;
      expect(native.map((t: any) => [t.symbol, t.is_native])).to.deep.equal([['IETH', true]]);
      const found = expectOk(await call('GET', `/price/api/v1/tokens/platforms/${tokenAddress.toLowerCase()}`)).items;
      expect(found).to.have.length(1);
      expect(found[0]).to.include({ name: 'Import Dollar, bridged', symbol: 'IUSD', decimals: 6, chain_id: chain.id, contract_address: tokenAddress });
      expect(found[0].id).to.be.at.least(IMPORT_ID_START.tokens);

      writeFileSync(csv, `chain,name,symbol,decimals,contract_address\n${chain.id},Import Dollar,IUSD,6,${tokenAddress.toLowerCase()}\n`);
      r = await admin(['reference:import', '--file', csv, '--kind', 'tokens']);
      expect(r.out).to.contain('tokens: 0 added, 1 updated');
      const again = expectOk(await call('GET', `/price/api/v1/tokens?chain_id=${chain.id}&address=${tokenAddress}`)).items;
      expect(again.map((t: any) => [t.id, t.name])).to.deep.equal([[found[0].id, 'Import Dollar']]);
    });

    it('writes nothing when a row is bad, naming every bad row', async function () {
      this.timeout(60_000);
      const json = path.join(dir, 'bad.json');
      const name = `Badnet ${env.runId}`;
      writeFileSync(json, JSON.stringify({ chains: [{ name, chain_type: 'evm', chain_id: 5 }, { name: 'x', chain_type: 'plasma' }], tokens: [{ chain: name, name: 'T', symbol: 'T', decimals: 99 }] }));
      const r = await admin(['reference:import', '--file', json]);
      expect(r.code).to.equal(1);
      expect(r.out).to.contain('chains[1]: chain_type must be one of').and.contain('tokens[0]: decimals must be an integer from 0 to 36').and.contain('nothing imported');
      expectPriceError(await call('GET', `/price/api/v1/chains/${encodeURIComponent(name)}`), 200, 20002, 'chain not found');
      const unknownChain = path.join(dir, 'orphan.json');
      writeFileSync(unknownChain, JSON.stringify({ chains: [{ name, chain_type: 'evm', chain_id: 5 }], tokens: [{ chain: 'No such chain', name: 'T', symbol: 'T', decimals: 6 }] }));
      const r2 = await admin(['reference:import', '--file', unknownChain]);
      expect(r2.code).to.equal(1);
      expect(r2.out).to.contain('unknown chain');
      // The transaction rolled back: the chain of that file is not there either.
      expectPriceError(await call('GET', `/price/api/v1/chains/${encodeURIComponent(name)}`), 200, 20002, 'chain not found');
    });
  });
});
