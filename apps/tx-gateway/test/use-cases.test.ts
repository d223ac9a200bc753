import { expect } from 'chai';
import { Registry } from 'prom-client';
import { NETWORKS, parseChainOrigins } from '@chainpipe/chains';
import type { AddressChangeMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import { createLogger } from '@chainpipe/runtime';
import { SecretBox } from '@chainpipe/runtime';
import type { TxQueries } from '@chainpipe/tx-store';
import { checkWebhookUrl } from '@chainpipe/webhooks';
import { addressUseCases } from '../src/use-cases/addresses';
import { appConfigUseCases } from '../src/use-cases/app-config';
import { queryUseCases } from '../src/use-cases/queries';
import { rpcProxyUseCases } from '../src/use-cases/rpc-proxy';
import { methodRefused } from '../src/management/rpc-proxy';

const logger = createLogger({ name: 'use-case-test', level: 'silent' });

/**
 * A stand-in for knex that records what the address repository asks of it, in order: the
 * transaction's begin and commit, the application's lock, each delete and insert. No I/O.
 */
function recordingDb(steps: string[]): Knex {
  const table = (name: string) => {
    let rows: { address: string }[] = [];
    let addresses: string[] = [];
    const q = {
      where: () => q,
      whereIn: (_column: string, values: string[]) => ((addresses = values), q),
      del: async () => (steps.push(`delete ${name} ${addresses.join(',')}`), addresses.length),
      insert: (values: { address: string }[]) => ((rows = values), q),
      onConflict: () => q,
      ignore: () => q,
      returning: async () => (steps.push(`insert ${name} ${rows.map((r) => r.address).join(',')}`), rows),
    };
    return q;
  };
  const trx = Object.assign(table, { raw: async (sql: string) => void steps.push(sql.includes('pg_advisory_xact_lock') ? 'lock' : sql) });
  const db = Object.assign(table, {
    transaction: async <T>(work: (t: typeof trx) => Promise<T>): Promise<T> => {
      steps.push('begin');
      const result = await work(trx);
      steps.push('commit');
      return result;
    },
  });
  return db as unknown as Knex;
}

const counterValue = async (registry: Registry, name: string) => (await registry.getSingleMetric(name)!.get()).values.reduce((n, v) => n + v.value, 0);

describe('address use-cases', () => {
  const change = { chainType: 'ethereum' as const, adds: ['0x' + 'aa'.repeat(20), '0x' + 'bb'.repeat(20)], removes: ['0x' + 'cc'.repeat(20)] };

  it('writes under the application lock and publishes the change before its transaction commits', async () => {
    const steps: string[] = [];
    const published: AddressChangeMessage[][] = [];
    const addresses = addressUseCases({
      db: recordingDb(steps),
      publishChanges: async (messages) => void (published.push(messages), steps.push('publish')),
      clock: { now: () => 1_765_000_000_000 },
      logger,
      registry: new Registry(),
    });
    await addresses.change('app-1', [change]);
    expect(steps).to.deep.equal(['begin', 'lock', `delete tx.monitored_addresses ${change.removes[0]}`, `insert tx.monitored_addresses ${change.adds.join(',')}`, 'publish', 'commit']);
    expect(published).to.deep.equal([[{ app_id: 'app-1', chain_type: 'ethereum', adds: change.adds, removes: change.removes, changed_at: 1_765_000_000_000 }]]);
  });

  it('a failed publish still commits the write, and is counted per message', async () => {
    const steps: string[] = [];
    const registry = new Registry();
    const addresses = addressUseCases({
      db: recordingDb(steps),
      publishChanges: () => Promise.reject(new Error('broker unreachable')),
      clock: { now: () => 1 },
      logger,
      registry,
    });
    await addresses.change('app-1', [change, { chainType: 'tron', adds: ['TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'], removes: [] }]);
    expect(steps.at(-1)).to.equal('commit');
    expect(await counterValue(registry, 'chainpipe_tx_address_change_publish_failures_total')).to.equal(2);
  });

  it('a request that changes nothing publishes nothing', async () => {
    const steps: string[] = [];
    const addresses = addressUseCases({
      db: recordingDb(steps),
      publishChanges: async () => void steps.push('publish'),
      clock: { now: () => 1 },
      logger,
      registry: new Registry(),
    });
    await addresses.change('app-1', [{ chainType: 'ethereum', adds: [], removes: [] }]);
    expect(steps).to.deep.equal(['begin', 'lock', 'commit']);
  });
});

describe('query use-cases: the single transaction', () => {
  const ethereum = NETWORKS.find((n) => n.chainType === 'ethereum' && n.chainId === 1)!;
  const untouched = new Proxy({}, { get: () => { throw new Error('the database was asked'); } }) as TxQueries;
  const queries = (published: unknown[]) =>
    queryUseCases({
      transactions: untouched,
      origins: parseChainOrigins('', null),
      rpcTimeoutMs: 1000,
      publishFetched: async (m) => void published.push(m),
      clock: { now: () => 1 },
      logger,
      registry: new Registry(),
    });

  it('a hash no transaction of the chain can have is data null, with no look-up', async () => {
    const published: unknown[] = [];
    expect(await queries(published).transaction({ network: ethereum, txHash: '0x1234', noCache: false })).to.deep.equal({ kind: 'record', record: null });
    expect(published).to.deep.equal([]);
  });

  it('no chain origin configured for the network is the origin failure (502), nothing published', async () => {
    const published: unknown[] = [];
    expect(await queries(published).transaction({ network: ethereum, txHash: '0x' + 'ab'.repeat(32), noCache: true })).to.deep.equal({ kind: 'origin_failed' });
    expect(published).to.deep.equal([]);
  });
});

describe('app-config use-cases', () => {
  it('a refused webhook target is the 400 of the target check, and nothing is written', async () => {
    const untouched = new Proxy({}, { get: () => { throw new Error('the database was asked'); } }) as Knex;
    const appConfig = appConfigUseCases({
      db: untouched,
      secretBox: new SecretBox('0'.repeat(64)),
      allowPrivateWebhookTargets: false,
      retryWebhooks: () => Promise.reject(new Error('not asked')),
      clock: { now: () => 1 },
      logger,
    });
    const url = 'http://127.0.0.1/hook';
    const check = checkWebhookUrl(url, { allowPrivate: false });
    if (check.ok) throw new Error('the target check accepts a loopback http URL');
    const refused = { ok: false, error: `webhook_url ${check.reason}` };
    expect(await appConfig.replace('app-1', { enable_webhook: true, webhook_url: url })).to.deep.equal(refused);
    expect(await appConfig.update('app-1', { webhook_url: url })).to.deep.equal(refused);
  });
});

describe('rpc proxy use-cases', () => {
  const ethereum = NETWORKS.find((n) => n.chainType === 'ethereum' && n.chainId === 1)!;
  const proxyOf = (registry: Registry) => rpcProxyUseCases({ origins: parseChainOrigins('', null), maxAnswerBytes: 1024, rpcTimeoutMs: 1000, logger, registry });

  it('a method that is not a read is refused with 400 before any node is looked up; a read without a node is 503', async () => {
    const registry = new Registry();
    const proxy = proxyOf(registry);
    expect(await proxy.forward(ethereum, 'eth_sendRawTransaction', ['0x00'])).to.deep.equal({ ok: false, status: 400, message: methodRefused(ethereum, 'eth_sendRawTransaction') });
    expect(await proxy.forward(ethereum, 'eth_blockNumber', [])).to.deep.equal({ ok: false, status: 503, message: `no chain origin configured for ${ethereum.network}` });
    const outcomes = (await registry.getSingleMetric('chainpipe_tx_rpc_proxy_calls_total')!.get()).values.map((v) => v.labels.outcome).sort();
    expect(outcomes).to.deep.equal(['method_refused', 'no_origin']);
  });

  it('a missing or unknown x-chain-net is counted as refused and answered 500 and 400 as the spec has them', async () => {
    const registry = new Registry();
    const proxy = proxyOf(registry);
    // The spec gives a missing x-chain-net 500; an unknown network is a bad request.
    expect(proxy.network(undefined)).to.include({ ok: false, status: 500 });
    expect(proxy.network('no-such-net')).to.include({ ok: false, status: 400 });
    expect(proxy.network(ethereum.network)).to.deep.equal({ ok: true, network: ethereum });
    const outcomes = (await registry.getSingleMetric('chainpipe_tx_rpc_proxy_calls_total')!.get()).values.map((v) => v.labels.outcome).sort();
    expect(outcomes).to.deep.equal(['missing_network', 'unknown_network']);
  });
});
