import type { Knex } from 'knex';
import { addressKey } from '@chainpipe/chains';
import type { ChainRow, FiatRow, ImportChain, ImportToken, TokenRow } from '@chainpipe/price';

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

/** Reads of the reference tables (schema `price`); active rows only, but for the look-ups of a token an order keeps (they say so). Parameterised SQL throughout. */
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

  /**
   * Why a token id is not among the active tokens: a known token on a chain that is switched off
   * (or itself switched off) is a chain problem, `chain not found`; an id never stored, `token not found`.
   */
  async unlistedTokenReason(tokenId: number): Promise<UnlistedTokenReason> {
    return unlistedTokenReason((await this.db('price.tokens').where({ id: tokenId }).first('id')) !== undefined);
  }

  /** The chain type of a token's chain, active or not (an order keeps its tokens after one is switched off). */
  async chainTypeOfToken(tokenId: number): Promise<string | undefined> {
    const row: { chain_type: string } | undefined = await this.db('price.tokens as t').join('price.chains as c', 'c.id', 't.chain_id').where('t.id', tokenId).first('c.chain_type');
    return row?.chain_type;
  }

  /** What a token is on its chain (native coin or contract, and its decimals), active or not. */
  tokenAsset(tokenId: number): Promise<TokenAssetRow | undefined> {
    return this.db('price.tokens').where({ id: tokenId }).first('is_native', 'contract_address', 'decimals');
  }

  /** The columns of a channel's token reference of any token, active or not. */
  tokenRefRow(tokenId: number): Promise<TokenRefRow | undefined> {
    return this.db('price.tokens').where({ id: tokenId }).first('id', 'symbol', 'decimals', 'chain_id', 'contract_address');
  }
}

/** A token as its chain knows it. */
export interface TokenAssetRow {
  is_native: boolean;
  contract_address: string | null;
  decimals: number;
}

/** What a channel is told of a token (`tokenRefOf`). */
export interface TokenRefRow {
  id: number;
  symbol: string;
  decimals: number;
  chain_id: number;
  contract_address: string | null;
}

export type UnlistedTokenReason = 'chain not found' | 'token not found';

/** The refusal of a token id that is not among the active tokens, by whether the id is stored at all. */
export function unlistedTokenReason(stored: boolean): UnlistedTokenReason {
  return stored ? 'chain not found' : 'token not found';
}

export interface ImportOutcome {
  chains: { added: number; updated: number };
  tokens: { added: number; updated: number };
}

/**
 * Writes an operator import in one transaction. Chains are matched by name (case-insensitive),
 * tokens by chain + contract address (the chain's address form) or, for a native coin, by chain:
 * a match is updated in place and keeps its id (the ids other services hold stay valid); anything
 * new gets the next id of its sequence (above the seed's ids). Unknown chain references abort it.
 */
export async function importReference(db: Knex, data: { chains: ImportChain[]; tokens: ImportToken[] }): Promise<ImportOutcome> {
  return db.transaction(async (trx) => {
    const outcome: ImportOutcome = { chains: { added: 0, updated: 0 }, tokens: { added: 0, updated: 0 } };
    for (const c of data.chains) {
      const existing = await trx('price.chains').whereRaw('lower(name) = lower(?)', [c.name]).first('id');
      if (existing) {
        await trx('price.chains').where({ id: existing.id }).update({ ...c });
        outcome.chains.updated += 1;
      } else {
        await trx('price.chains').insert({ ...c });
        outcome.chains.added += 1;
      }
    }
    const chains: { id: number; name: string; chain_type: string }[] = await trx('price.chains').select('id', 'name', 'chain_type');
    for (const t of data.tokens) {
      const chain = typeof t.chain === 'number' ? chains.find((c) => c.id === t.chain) : chains.find((c) => c.name.toLowerCase() === String(t.chain).toLowerCase());
      if (!chain) throw new Error(`token ${t.symbol}: unknown chain ${JSON.stringify(t.chain)}`);
      const key = t.contract_address ? addressKey(chain.chain_type, t.contract_address) : null;
      const row = { chain_id: chain.id, name: t.name, symbol: t.symbol, decimals: t.decimals, logo_url: t.logo_url, contract_address: t.contract_address, address_key: key, is_native: key === null, external_id: t.external_id };
      const existing = await (key === null ? trx('price.tokens').where({ chain_id: chain.id, is_native: true }) : trx('price.tokens').where({ chain_id: chain.id, address_key: key })).first('id');
      if (existing) {
        await trx('price.tokens').where({ id: existing.id }).update(row);
        outcome.tokens.updated += 1;
      } else {
        await trx('price.tokens').insert(row);
        outcome.tokens.added += 1;
      }
    }
    return outcome;
  });
}
