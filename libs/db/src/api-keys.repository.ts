import type { Knex } from 'knex';

export interface AppRow {
  app_id: string;
  name: string;
  is_active: boolean;
  created_at: Date;
}

/** What a key may do: `customer` its own application's data, `operator` also the shared resources. */
export type ApiKeyRole = 'customer' | 'operator';
export const API_KEY_ROLES: readonly ApiKeyRole[] = ['customer', 'operator'];

/** Applications and their API keys (schema `core`). Only hashes of key secrets are stored. */

export class ApiKeyRepository {
  constructor(private readonly db: Knex) {}

  async createApp(appId: string, name: string): Promise<void> {
    await this.db('core.apps').insert({ app_id: appId, name }).onConflict('app_id').ignore();
  }

  /** A new key of the application; `operator` keys also manage shared resources (D171). */
  async addKey(appId: string, keyId: string, secretHash: string, label: string | null, role: ApiKeyRole = 'customer'): Promise<void> {
    await this.db('core.api_keys').insert({ key_id: keyId, app_id: appId, secret_hash: secretHash, label, role });
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const n = await this.db('core.api_keys').where({ key_id: keyId }).whereNull('revoked_at').update({ revoked_at: this.db.fn.now() });
    return n > 0;
  }

  async setAppActive(appId: string, active: boolean): Promise<boolean> {
    const n = await this.db('core.apps').where({ app_id: appId }).update({ is_active: active });
    return n > 0;
  }

  async listApps(): Promise<(AppRow & { keys: number })[]> {
    return this.db('core.apps as a')
      .leftJoin('core.api_keys as k', function join() {
        this.on('k.app_id', 'a.app_id').andOnNull('k.revoked_at');
      })
      .groupBy('a.app_id')
      .select('a.app_id', 'a.name', 'a.is_active', 'a.created_at')
      .count<(AppRow & { keys: number })[]>({ keys: 'k.key_id' })
      .orderBy('a.created_at');
  }

  /** The key with its application's state; used by the HTTP key resolver. */
  async findKey(keyId: string): Promise<{ appId: string; keyId: string; secretHash: string; active: boolean; role: ApiKeyRole } | undefined> {
    const row = await this.db('core.api_keys as k')
      .join('core.apps as a', 'a.app_id', 'k.app_id')
      .where('k.key_id', keyId)
      .first('k.key_id', 'k.app_id', 'k.secret_hash', 'k.revoked_at', 'k.role', 'a.is_active');
    if (!row) return undefined;
    return { appId: row.app_id, keyId: row.key_id, secretHash: row.secret_hash, active: row.is_active && !row.revoked_at, role: row.role };
  }
}
