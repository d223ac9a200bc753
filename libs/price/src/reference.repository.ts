import type { Knex } from 'knex';
import type { ChainRow, FiatRow, TokenRow } from './reference';

const TOKEN_COLUMNS = [
  't.id',
  't.chain_id',
  'c.name as chain_name',
  'c.chain_type',
  'c.chain_id as protocol_chain_id',
  't.name',
  't.symbol',
  't.decimals',
  't.logo_url',
  't.contract_address',
  't.is_native',
  't.external_id',
] as const;

/** Reads of the reference tables (schema `price`); active rows only. Parameterised SQL throughout. */
export class ReferenceRepository {
  constructor(private readonly db: Knex) {}

  private chains() {
    return this.db('price.chains').where({ is_active: true }).select('id', 'name', 'short_name', 'chain_id', 'chain_type', 'icon_url', 'explorer_url', 'gecko_network');
  }

  private tokens() {
    return this.db('price.tokens as t')
      .join('price.chains as c', 'c.id', 't.chain_id')
      .where({ 't.is_active': true, 'c.is_active': true })
      .select(...TOKEN_COLUMNS);
  }

  listChains(): Promise<ChainRow[]> {
    return this.chains().orderBy('id');
  }

  /** By internal id (a decimal string), else by name or short name, case-insensitive. */
  async findChain(idOrName: string): Promise<ChainRow | undefined> {
    const key = idOrName.trim();
    if (/^\d{1,9}$/.test(key)) {
      const byId = await this.chains().where({ id: Number(key) }).first();
      if (byId) return byId;
    }
    const byName = await this.chains().whereRaw('lower(name) = lower(?)', [key]).first();
    return byName ?? this.chains().whereRaw('lower(short_name) = lower(?)', [key]).orderBy('id').first();
  }

  /** The chain a pool or quote request names: a normalized chain type and its protocol chain id. */
  findChainByProtocolId(chainType: string, chainId: number): Promise<ChainRow | undefined> {
    return this.chains().where({ chain_type: chainType, chain_id: chainId }).orderBy('id').first();
  }

  async countTokens(): Promise<number> {
    const row = await this.db('price.tokens as t').join('price.chains as c', 'c.id', 't.chain_id').where({ 't.is_active': true, 'c.is_active': true }).count<{ n: string }[]>({ n: '*' });
    return Number(row[0].n);
  }

  /** A page of active tokens in id order. Tokens lists stay small (thousands), so OFFSET is fine here. */
  pageTokens(page: number, limit: number): Promise<TokenRow[]> {
    return this.tokens().orderBy('t.id').limit(limit).offset((page - 1) * limit);
  }

  nativeToken(chainId: number): Promise<TokenRow[]> {
    return this.tokens().where({ 't.chain_id': chainId, 't.is_native': true }).orderBy('t.id');
  }

  /** Exact contract match, in the chain's address form; `chainId` null searches every chain. */
  tokensByAddress(address: string, chainId: number | null): Promise<TokenRow[]> {
    const a = address.trim();
    const q = this.tokens().where(function match() {
      this.where(function evm() {
        this.where('c.chain_type', 'evm').where('t.address_key', a.toLowerCase());
      }).orWhere(function other() {
        this.whereNot('c.chain_type', 'evm').where('t.address_key', a);
      });
    });
    if (chainId !== null) q.where('t.chain_id', chainId);
    return q.orderBy('t.id');
  }

  /** Platform search: contract address first, else name or symbol; exact and case-insensitive. */
  async searchPlatforms(keyword: string): Promise<TokenRow[]> {
    const k = keyword.trim();
    const byAddress = await this.tokens().whereRaw('lower(t.contract_address) = lower(?)', [k]).orderBy('t.id');
    if (byAddress.length) return byAddress;
    return this.tokens()
      .where(function nameOrSymbol() {
        this.whereRaw('lower(t.name) = lower(?)', [k]).orWhereRaw('lower(t.symbol) = lower(?)', [k]);
      })
      .orderBy('t.id');
  }

  tokensByIds(ids: readonly number[]): Promise<TokenRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.tokens().whereIn('t.id', [...ids]);
  }

  allTokens(): Promise<TokenRow[]> {
    return this.tokens().orderBy('t.id');
  }

  /** Every active token with an external id (what the quotes source is asked for). */
  allQuotedTokens(): Promise<TokenRow[]> {
    return this.tokens().whereNotNull('t.external_id').orderBy('t.id');
  }

  listFiats(): Promise<FiatRow[]> {
    return this.db('price.fiats').select('id', 'code', 'name', 'symbol', 'icon_url', 'precision').orderBy('id');
  }
}
