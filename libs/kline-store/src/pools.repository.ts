import { int4Array, type Knex } from '@chainpipe/db';
import type { PoolRecord } from '@chainpipe/kline';

/** A row of kline.pools: the record's fields as pg returns them (bigint as text, timestamps as dates). */
type PoolRow = Omit<PoolRecord, 'chain_id' | 'created_at' | 'updated_at'> & { chain_id: string; created_at: Date; updated_at: Date };

export type NewPool = Pick<PoolRecord, 'chain_type' | 'chain_id' | 'network_id' | 'pool_address' | 'token' | 'dex_id' | 'label'>;

const toRecord = (r: PoolRow): PoolRecord => ({
  id: r.id,
  chain_type: r.chain_type,
  chain_id: Number(r.chain_id),
  network_id: r.network_id,
  pool_address: r.pool_address,
  token: r.token,
  dex_id: r.dex_id,
  label: r.label,
  is_active: r.is_active,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** Registered pools (kline.pools). The table is the source of truth for what is collected. */
export class PoolRepository {
  constructor(private readonly db: Knex) {}

  /** Inserts a pool; undefined when the same chain, address (any case) and side exists already. */
  async create(p: NewPool): Promise<PoolRecord | undefined> {
    const rows: PoolRow[] = await this.db.raw(
      `insert into kline.pools (chain_type, chain_id, network_id, pool_address, token, dex_id, label)
       values (?, ?, ?, ?, ?, ?, ?)
       on conflict (chain_type, chain_id, lower(pool_address), token) do nothing
       returning *`,
      [p.chain_type, p.chain_id, p.network_id, p.pool_address, p.token, p.dex_id, p.label],
    ).then((r: { rows: PoolRow[] }) => r.rows);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /**
   * Which of these ids name no registered pool (active or not). The answer is what is missing,
   * usually nothing: the aggregator asks for thousands of pools a call, and a row back for each
   * registered one was most of the check's cost in the process.
   */
  async unregistered(ids: readonly number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    const { rows } = await this.db.raw<{ rows: { ids: number[] }[] }>(
      `select coalesce(array_agg(i), '{}') as ids from unnest(?::int[]) as i where not exists (select 1 from kline.pools p where p.id = i)`,
      [int4Array(ids)],
    );
    return new Set(rows[0].ids);
  }

  async get(id: number): Promise<PoolRecord | undefined> {
    const row = await this.db<PoolRow>('kline.pools').where({ id }).first();
    return row ? toRecord(row) : undefined;
  }

  async list(page: number, pageSize: number): Promise<{ items: PoolRecord[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db<PoolRow>('kline.pools').orderBy('id').limit(pageSize).offset((page - 1) * pageSize),
      this.db('kline.pools').count<{ n: string }[]>({ n: '*' }),
    ]);
    return { items: rows.map(toRecord), total: Number(count[0].n) };
  }

  async setActive(id: number, active: boolean): Promise<PoolRecord | undefined> {
    const [row] = await this.db<PoolRow>('kline.pools').where({ id }).update({ is_active: active, updated_at: this.db.fn.now() as unknown as Date }).returning('*');
    return row ? toRecord(row) : undefined;
  }

  async active(): Promise<PoolRecord[]> {
    const rows = await this.db<PoolRow>('kline.pools').where({ is_active: true }).orderBy('id');
    return rows.map(toRecord);
  }

  /** Active pools with this chain and address (any case): the WebSocket needs exactly one. */
  async activeByAddress(chainType: string, chainId: number, poolAddress: string): Promise<PoolRecord[]> {
    // The WebSocket's subscribe reaches here without the HTTP boundary: a text no row can hold
    // (Postgres refuses NUL) matches nothing instead of failing the query.
    if (poolAddress.includes('\u0000') || chainType.includes('\u0000')) return [];
    const rows = await this.db<PoolRow>('kline.pools')
      .where({ chain_type: chainType, chain_id: String(chainId), is_active: true })
      .whereRaw('lower(pool_address) = lower(?)', [poolAddress])
      .orderBy('id');
    return rows.map(toRecord);
  }

  /** The pool whose candles a history query reads: an active one first, then the oldest. */
  async findForHistory(chainType: string, chainId: number, poolAddress: string): Promise<PoolRecord | undefined> {
    const row = await this.db<PoolRow>('kline.pools')
      .where({ chain_type: chainType, chain_id: String(chainId) })
      .whereRaw('lower(pool_address) = lower(?)', [poolAddress])
      .orderBy([{ column: 'is_active', order: 'desc' }, { column: 'id', order: 'asc' }])
      .first();
    return row ? toRecord(row) : undefined;
  }
}
