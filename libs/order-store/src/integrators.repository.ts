import type { Knex } from '@chainpipe/db';

/** At most this many keys (not deleted) per integrator (spec, Limits). */
export const MAX_KEYS_PER_INTEGRATOR = 20;

export interface IntegratorRow {
  id: string;
  name: string;
  is_active: boolean;
  created_at: Date;
  deleted_at: Date | null;
}

export interface IntegratorKeyRow {
  key_id: string;
  integrator_id: string;
  label: string | null;
  fee_rate_bp: number;
  is_enabled: boolean;
  created_at: Date;
}

/** A key as the gateway resolves it: the stored hash, its rate and both switches. */
export interface StoredIntegratorKey {
  keyId: string;
  integratorId: string;
  secretHash: string;
  feeRateBp: number;
  keyEnabled: boolean;
  integratorActive: boolean;
}

export class NoSuchIntegratorError extends Error {
  constructor(integratorId: string) {
    super(`no integrator ${integratorId}`);
  }
}

export class KeyLimitError extends Error {
  constructor(integratorId: string) {
    super(`integrator ${integratorId} already has ${MAX_KEYS_PER_INTEGRATOR} keys`);
  }
}

/**
 * Integrators and their keys (schema `agg`). Only sha256 of a key's secret is stored (the key
 * format and hashing are those of `@chainpipe/http`'s API keys). Deletion is soft: a deleted key
 * or integrator stops working at once while its orders keep their fee snapshots.
 */
export class IntegratorRepository {
  constructor(private readonly db: Knex) {}

  async createIntegrator(name: string): Promise<string> {
    const [row] = await this.db('agg.integrators').insert({ name }).returning<{ id: string }[]>('id');
    return String(row.id);
  }

  /** Enables or disables a live integrator; false when there is none with that id. */
  async setIntegratorActive(id: string, active: boolean): Promise<boolean> {
    const n = await this.db('agg.integrators').where({ id }).whereNull('deleted_at').update({ is_active: active });
    return n > 0;
  }

  /** Deletes an integrator and every key of it (soft: orders and ledger lines keep naming it). */
  async deleteIntegrator(id: string): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const n = await trx('agg.integrators').where({ id }).whereNull('deleted_at').update({ is_active: false, deleted_at: trx.fn.now() });
      if (n === 0) return false;
      await trx('agg.integrator_keys').where({ integrator_id: id }).whereNull('deleted_at').update({ is_enabled: false, deleted_at: trx.fn.now() });
      return true;
    });
  }

  /**
   * Adds a key. The integrator's row is locked while its keys are counted, so concurrent
   * additions cannot pass the limit together.
   */
  async addKey(integratorId: string, key: { keyId: string; secretHash: string; feeRateBp: number; label: string | null }): Promise<void> {
    await this.db.transaction(async (trx) => {
      const owner = await trx('agg.integrators').where({ id: integratorId }).whereNull('deleted_at').forUpdate().first('id');
      if (!owner) throw new NoSuchIntegratorError(integratorId);
      const [{ n }] = await trx('agg.integrator_keys').where({ integrator_id: integratorId }).whereNull('deleted_at').count<{ n: string }[]>({ n: '*' });
      if (Number(n) >= MAX_KEYS_PER_INTEGRATOR) throw new KeyLimitError(integratorId);
      await trx('agg.integrator_keys').insert({
        key_id: key.keyId,
        integrator_id: integratorId,
        secret_hash: key.secretHash,
        fee_rate_bp: key.feeRateBp,
        label: key.label,
      });
    });
  }

  async setKeyEnabled(keyId: string, enabled: boolean): Promise<boolean> {
    const n = await this.db('agg.integrator_keys').where({ key_id: keyId }).whereNull('deleted_at').update({ is_enabled: enabled });
    return n > 0;
  }

  async deleteKey(keyId: string): Promise<boolean> {
    const n = await this.db('agg.integrator_keys').where({ key_id: keyId }).whereNull('deleted_at').update({ is_enabled: false, deleted_at: this.db.fn.now() });
    return n > 0;
  }

  async listIntegrators(): Promise<(IntegratorRow & { keys: number })[]> {
    const rows = await this.db('agg.integrators as i')
      .leftJoin('agg.integrator_keys as k', function join() {
        this.on('k.integrator_id', 'i.id').andOnNull('k.deleted_at');
      })
      .whereNull('i.deleted_at')
      .groupBy('i.id')
      .select('i.id', 'i.name', 'i.is_active', 'i.created_at', 'i.deleted_at')
      .count<(IntegratorRow & { keys: string })[]>({ keys: 'k.key_id' })
      .orderBy('i.id');
    return rows.map((r) => ({ ...r, id: String(r.id), keys: Number(r.keys) }));
  }

  async listKeys(integratorId: string): Promise<IntegratorKeyRow[]> {
    const rows = await this.db('agg.integrator_keys')
      .where({ integrator_id: integratorId })
      .whereNull('deleted_at')
      .select<IntegratorKeyRow[]>('key_id', 'integrator_id', 'label', 'fee_rate_bp', 'is_enabled', 'created_at')
      .orderBy('created_at');
    return rows.map((r) => ({ ...r, integrator_id: String(r.integrator_id) }));
  }

  /** The integrator's commission balance: per ledger state and source token, amounts and their USD value at creation prices. */
  async balance(integratorId: string): Promise<{ state: string; token_id: number; amount: string; amount_usd: string; lines: number }[]> {
    const { rows } = await this.db.raw<{ rows: { state: string; token_id: number; amount: string; amount_usd: string; lines: string }[] }>(
      `select state, token_id, sum(amount) as amount, sum(amount_usd) as amount_usd, count(*) as lines
         from agg.integrator_commission_ledger where integrator_id = ? group by state, token_id order by state, token_id`,
      [integratorId],
    );
    return rows.map((r) => ({ state: String(r.state), token_id: Number(r.token_id), amount: String(r.amount), amount_usd: String(r.amount_usd), lines: Number(r.lines) }));
  }

  /**
   * A withdrawal of the integrator's `Available` commission (of one source token when given):
   * those lines become `WithdrawRequested` under a new withdrawal naming who asked
   * (docs/decisions.md#d163). Undefined when nothing is available.
   */
  async requestWithdrawal(integratorId: string, requestedBy: string, tokenId?: number): Promise<{ id: string; totals: WithdrawalTotal[] } | undefined> {
    return this.db.transaction(async (trx) => {
      const q = trx('agg.integrator_commission_ledger').where({ integrator_id: integratorId, state: 'Available' }).forUpdate().select<{ id: string }[]>('id');
      if (tokenId !== undefined) q.where('token_id', tokenId);
      const lines = await q;
      if (lines.length === 0) return undefined;
      const [{ id }] = await trx('agg.commission_withdrawals').insert({ integrator_id: integratorId, requested_by: requestedBy }).returning<{ id: string }[]>('id');
      await trx('agg.integrator_commission_ledger').whereIn('id', lines.map((l) => l.id)).update({ state: 'WithdrawRequested', withdrawal_id: id, updated_at: trx.fn.now() });
      return { id: String(id), totals: await withdrawalTotals(trx, String(id)) };
    });
  }

  /** A requested withdrawal paid out: its lines `Withdrawn`, the payout's reference and who recorded it kept on it. */
  async completeWithdrawal(withdrawalId: string, paidBy: string, reference: string): Promise<{ kind: 'withdrawn'; totals: WithdrawalTotal[] } | { kind: 'not_requested'; state: string | null }> {
    return this.db.transaction(async (trx) => {
      const w = await trx('agg.commission_withdrawals').where({ id: withdrawalId }).forUpdate().first<{ state: string } | undefined>('state');
      if (!w || w.state !== 'WithdrawRequested') return { kind: 'not_requested' as const, state: w?.state ?? null };
      await trx('agg.commission_withdrawals').where({ id: withdrawalId }).update({ state: 'Withdrawn', paid_by: paidBy, paid_at: trx.fn.now(), reference });
      await trx('agg.integrator_commission_ledger').where({ withdrawal_id: withdrawalId, state: 'WithdrawRequested' }).update({ state: 'Withdrawn', updated_at: trx.fn.now() });
      return { kind: 'withdrawn' as const, totals: await withdrawalTotals(trx, withdrawalId) };
    });
  }

  /** The integrator's withdrawals, newest first, with who requested and who paid them. */
  async withdrawals(integratorId: string): Promise<WithdrawalRow[]> {
    const rows = await this.db('agg.commission_withdrawals').where({ integrator_id: integratorId }).orderBy('id', 'desc').select<WithdrawalRow[]>('id', 'state', 'requested_by', 'requested_at', 'paid_by', 'paid_at', 'reference');
    return rows.map((r) => ({ ...r, id: String(r.id) }));
  }

  /** The key with its integrator's state (undefined when unknown or deleted). */
  async findKey(keyId: string): Promise<StoredIntegratorKey | undefined> {
    const row = await this.db('agg.integrator_keys as k')
      .join('agg.integrators as i', 'i.id', 'k.integrator_id')
      .where('k.key_id', keyId)
      .whereNull('k.deleted_at')
      .first('k.key_id', 'k.integrator_id', 'k.secret_hash', 'k.fee_rate_bp', 'k.is_enabled', 'i.is_active', 'i.deleted_at');
    if (!row) return undefined;
    return {
      keyId: row.key_id,
      integratorId: String(row.integrator_id),
      secretHash: row.secret_hash,
      feeRateBp: row.fee_rate_bp,
      keyEnabled: row.is_enabled,
      integratorActive: row.is_active && !row.deleted_at,
    };
  }
}

/** What a withdrawal moves, per source token (smallest unit, USD at creation prices). */
export interface WithdrawalTotal {
  token_id: number;
  amount: string;
  amount_usd: string;
  lines: number;
}

export interface WithdrawalRow {
  id: string;
  state: 'WithdrawRequested' | 'Withdrawn';
  requested_by: string;
  requested_at: Date;
  paid_by: string | null;
  paid_at: Date | null;
  reference: string | null;
}

async function withdrawalTotals(db: Knex, withdrawalId: string): Promise<WithdrawalTotal[]> {
  const { rows } = await db.raw<{ rows: { token_id: number; amount: string; amount_usd: string; lines: string }[] }>(
    'select token_id, sum(amount) as amount, sum(amount_usd) as amount_usd, count(*) as lines from agg.integrator_commission_ledger where withdrawal_id = ? group by token_id order by token_id',
    [withdrawalId],
  );
  return rows.map((r) => ({ token_id: Number(r.token_id), amount: String(r.amount), amount_usd: String(r.amount_usd), lines: Number(r.lines) }));
}
