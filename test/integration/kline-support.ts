import { randomBytes } from 'node:crypto';
import type { Knex } from '@chainpipe/db';

/** Registers an active pool of a random address for a suite's candles; returns its id. */
export async function registerPool(db: Knex): Promise<number> {
  const [{ id }] = (await db('kline.pools')
    .insert({ chain_type: 'evm', chain_id: '1', network_id: 'eth', pool_address: `0x${randomBytes(20).toString('hex')}`, token: 'base', is_active: true })
    .returning('id')) as { id: number }[];
  return id;
}

/** Deletes a suite's pool and its candles. */
export async function removePool(db: Knex, id: number): Promise<void> {
  await db('kline.candles').where({ pool_id: id }).delete();
  await db('kline.pools').where({ id }).delete();
}
