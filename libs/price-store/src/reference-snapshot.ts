import { addressKey } from '@chainpipe/chains';
import type { FiatRow, TokenRow } from '@chainpipe/price';
import { RefreshedValue, type Clock } from '@chainpipe/runtime';
import type { ReferenceRepository } from './reference.repository';

/** Placeholders wallets use for a chain's native coin in contract-address fields. */
const NATIVE_PLACEHOLDERS = new Set(['0x0000000000000000000000000000000000000000', '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee']);

interface Snapshot {
  byId: Map<number, TokenRow>;
  /** `chain_type:protocol_chain_id:address_key` → token. */
  byChainAddress: Map<string, TokenRow>;
  /** `chain_type:address_key` → tokens (non-EVM requests may leave chain_id null). */
  byTypeAddress: Map<string, TokenRow[]>;
  /** `chain_type:protocol_chain_id` and `chain_type:` → native tokens. */
  natives: Map<string, TokenRow[]>;
  fiats: Map<string, FiatRow>;
  fiatList: FiatRow[];
}

const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
};

/**
 * The tokens and fiats that requests resolve ids and addresses against (the price service's
 * quotes, the quote stream's tokens), held in memory so a request costs no Postgres read for
 * them. Reloaded in the background once older than `refreshMs`, and at once (at most every
 * `missReloadMs`) when a lookup misses, so an operator's import is served within a second. With
 * `maxAgeMs`, a snapshot that old (after a quiet spell) is reloaded before it answers.
 */
export class ReferenceSnapshot {
  private readonly value: RefreshedValue<Snapshot>;

  constructor(
    private readonly repo: Pick<ReferenceRepository, 'allTokens' | 'listFiats'>,
    private readonly opts: { refreshMs: number; missReloadMs: number; maxAgeMs?: number; clock: Pick<Clock, 'now'> },
  ) {
    this.value = new RefreshedValue({ load: () => this.load(), refreshMs: opts.refreshMs, maxAgeMs: opts.maxAgeMs, clock: opts.clock });
  }

  private async load(): Promise<Snapshot> {
    const [tokens, fiatList] = await Promise.all([this.repo.allTokens(), this.repo.listFiats()]);
    const s: Snapshot = { byId: new Map(), byChainAddress: new Map(), byTypeAddress: new Map(), natives: new Map(), fiats: new Map(), fiatList };
    for (const t of tokens) {
      s.byId.set(t.id, t);
      const pid = t.protocol_chain_id === null ? '' : String(t.protocol_chain_id);
      if (t.is_native) {
        push(s.natives, `${t.chain_type}:${pid}`, t);
        push(s.natives, `${t.chain_type}:`, t);
      } else if (t.contract_address) {
        const key = addressKey(t.chain_type, t.contract_address);
        s.byChainAddress.set(`${t.chain_type}:${pid}:${key}`, t);
        push(s.byTypeAddress, `${t.chain_type}:${key}`, t);
      }
    }
    for (const f of fiatList) s.fiats.set(f.code, f);
    return s;
  }

  /** The snapshot to answer from: loads the first one, refreshes stale ones in the background. */
  get(): Promise<Snapshot> {
    return this.value.get();
  }

  /** Runs `lookup`; when it misses something, reloads (if the snapshot is old enough) and runs it again. */
  private async withMissReload<T>(lookup: (s: Snapshot) => { value: T; missed: boolean }): Promise<T> {
    const s = await this.get();
    const first = lookup(s);
    if (!first.missed || this.opts.clock.now() - (this.value.loadedAt ?? 0) < this.opts.missReloadMs) return first.value;
    return lookup(await this.value.reload()).value;
  }

  tokensByIds(ids: readonly number[]): Promise<(TokenRow | undefined)[]> {
    return this.withMissReload((s) => {
      const value = ids.map((id) => s.byId.get(id));
      return { value, missed: value.includes(undefined) };
    });
  }

  async fiat(code: string): Promise<FiatRow | undefined> {
    return this.withMissReload((s) => {
      const value = s.fiats.get(code);
      return { value, missed: !value };
    });
  }

  async fiats(): Promise<FiatRow[]> {
    return (await this.get()).fiatList;
  }

  /**
   * The token a batch entry names: exact chain + address; for non-EVM chains without a chain id,
   * the first token of that chain type with the address; the native coin for its symbol or a
   * native placeholder address.
   */
  tokensByAddress(entries: readonly { chainType: string; chainId: number | null; address: string }[]): Promise<(TokenRow | undefined)[]> {
    return this.withMissReload((s) => {
      const value = entries.map(({ chainType, chainId, address }) => {
        const pid = chainId === null ? '' : String(chainId);
        const key = addressKey(chainType, address);
        const exact = chainId !== null ? s.byChainAddress.get(`${chainType}:${pid}:${key}`) : s.byTypeAddress.get(`${chainType}:${key}`)?.[0];
        if (exact) return exact;
        const natives = s.natives.get(`${chainType}:${pid}`) ?? [];
        const a = address.trim().toLowerCase();
        return natives.find((n) => NATIVE_PLACEHOLDERS.has(a) || n.symbol.toLowerCase() === a);
      });
      return { value, missed: value.includes(undefined) };
    });
  }
}
