import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { networkByName } from '@chainpipe/chains';
import { loadContracts, type ChainTxMessage } from '@chainpipe/contracts';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, systemClock } from '@chainpipe/runtime';
import { toTransactionResult } from '@chainpipe/tx-records';
import { PoolTrades } from '@chainpipe/tx-store';
import { evmBlockItem, parseFixture, testEnv } from '@chainpipe/testing';
import { AddressIndex } from '../../apps/tx-matcher/src/address-index';
import { createChainTxHandler } from '../../apps/tx-matcher/src/chain-tx.handler';
import { poolKey } from '../../apps/tx-matcher/src/plan';

type Json = any;

/**
 * Pool trades: the matcher's chain.tx handler appends every transaction touching a registered
 * pool to the pool's FIFO in real Redis; the FIFO keeps the latest 100, newest first, each
 * transaction once however often it is replayed.
 */
describe('pool trades FIFO (matcher handler, real Redis)', () => {
  const env = testEnv();
  const contracts = loadContracts();
  let redis: Redis;
  let trades: PoolTrades;
  const eth = networkByName('ethereum-mainnet')!;
  const txs = parseFixture('evm', evmBlockItem(), eth).transactions;
  // The token contract moved most often in the block: a stand-in "pool" that many transactions touch.
  const counts = new Map<string, number>();
  for (const t of txs) for (const tt of t.token_transfers) if (tt.to_address) counts.set(tt.to_address, (counts.get(tt.to_address) ?? 0) + 1);
  const pool = [...counts].sort((a, b) => b[1] - a[1])[0][0];

  before(() => {
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:pools-${randomBytes(3).toString('hex')}:` });
    trades = new PoolTrades(redis, 3);
  });
  after(async () => {
    await trades.clear('ethereum', 1, pool);
    await redis.quit();
  });

  it('appends trades of a registered pool, newest first, capped, idempotent on replay', async () => {
    const handler = createChainTxHandler({
      index: () => new AddressIndex(),
      switches: async () => new Map(),
      publish: async () => undefined,
      pools: () => new Set([poolKey('ethereum', 1, pool)]),
      appendTrade: (p, id, tx) => trades.append(tx.chain_type, tx.chain_id, p, id, tx.tx_hash, toTransactionResult(tx)),
      clock: systemClock,
      logger: createLogger({ name: 'pool-test', level: 'silent' }),
      registry: new Registry(),
    });
    const touching = txs.filter((t) => t.sender === pool || t.receiver === pool || t.token_transfers.some((x) => x.from_address === pool || x.to_address === pool));
    expect(touching.length).to.be.greaterThan(3);
    const records = txs.map((tx, i) => ({ topic: 't', partition: 0, offset: String(i), key: null, headers: {}, timestamp: '0', value: { id: String(1000 + i), network: eth.network, is_reorg_resend: false, tx } as ChainTxMessage }));
    const ctx = { heartbeat: async () => undefined, signal: new AbortController().signal };
    await handler(records, ctx);
    await handler(records, ctx); // a replay changes nothing
    const got = await trades.latest('ethereum', 1, pool, 100);
    // The newest three by stored id: the last three touching transactions of the block.
    expect(got.map((t: Json) => t.txHash)).to.deep.equal(touching.slice(-3).reverse().map((t) => t.tx_hash));
    for (const t of got) expect(contracts.validate('common/transaction-result', t)).to.deep.equal({ ok: true });
    expect(await trades.latest('ethereum', 1, pool, 1)).to.have.length(1);
  });
});
