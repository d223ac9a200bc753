import { addressKey } from '@chainpipe/chains';
import type { FiatRow, TokenRow } from '@chainpipe/price';
import type { ReferenceRepository } from '@chainpipe/price-store';
import type { Clock } from '@chainpipe/runtime';

/** Placeholders wallets use for a chain's native coin in contract-address fields. */
const NATIVE_PLACEHOLDERS = new Set(['0x0000000000000000000000000000000000000000', '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee']);

interface Snapshot {
  at: number;
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
 * The tokens and fiats the quote endpoints resolve ids and addresses against, held in memory
 * so a quote request costs Redis reads only. Reloaded from Postgres in the background once older
 * than `refreshMs`, and at once (at most every `missReloadMs`) when a lookup misses, so an
 * operator's import is served within a second.
 */
export class ReferenceSnapshot {
  private current?: Snapshot;
  private loading?: Promise<Snapshot>;

  constructor(
    private readonly repo: Pick<ReferenceRepository, 'allTokens' | 'listFiats'>,
    private readonly opts: { refreshMs: number; missReloadMs: number; clock: Pick<Clock, 'now'> },
  ) {}

  private async load(): Promise<Snapshot> {
    const [tokens, fiatList] = await Promise.all([this.repo.allTokens(), this.repo.listFiats()]);
    const s: Snapshot = { at: this.opts.clock.now(), byId: new Map(), byChainAddress: new Map(), byTypeAddress: new Map(), natives: new Map(), fiats: new Map(), fiatList };
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

  private reload(): Promise<Snapshot> {
    this.loading ??= this.load().then(
      (s) => {
        this.current = s;
        this.loading = undefined;
        return s;
      },
      (err) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }

  /** The snapshot to answer from: loads the first one, refreshes stale ones in the background. */
  async get(): Promise<Snapshot> {
    if (!this.current) return this.reload();
    if (this.opts.clock.now() - this.current.at > this.opts.refreshMs) void this.reload().catch(() => undefined);
    return this.current;
  }

  /** Runs `lookup`; when it misses something, reloads (if the snapshot is old enough) and runs it again. */
  private async withMissReload<T>(lookup: (s: Snapshot) => { value: T; missed: boolean }): Promise<T> {
    const s = await this.get();
    const first = lookup(s);
    if (!first.missed || this.opts.clock.now() - s.at < this.opts.missReloadMs) return first.value;
    return lookup(await this.reload()).value;
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
