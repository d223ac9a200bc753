import { type JsonObject, asArray, asNonEmptyString, asObject, isObject, toBigInt, toSafeInt } from './json';

/**
 * The transaction's full account list, in index order. `json` encoding lists static keys as
 * strings and puts v0 lookup-table addresses in `meta.loadedAddresses` (writable, then
 * readonly — the order the runtime indexes them); `jsonParsed` lists objects `{pubkey, …}` that
 * already include the looked-up addresses (`source: "lookupTable"`), so those are not appended
 * again. Unreadable entries stay as null to keep the indexes aligned.
 */
export function accountKeys(message: JsonObject | null, meta: JsonObject | null): (string | null)[] {
  const raw = asArray(message?.accountKeys);
  let parsedStyle = false;
  const keys = raw.map((k) => {
    if (isObject(k)) {
      parsedStyle = true;
      return asNonEmptyString(k.pubkey);
    }
    return asNonEmptyString(k);
  });
  if (!parsedStyle) {
    const loaded = asObject(meta?.loadedAddresses);
    for (const k of asArray(loaded?.writable)) keys.push(asNonEmptyString(k));
    for (const k of asArray(loaded?.readonly)) keys.push(asNonEmptyString(k));
  }
  return keys;
}

/** What pre/postTokenBalances say about one token account. */
export interface TokenAccount {
  address: string | null;
  accountIndex: number;
  mint: string | null;
  owner: string | null;
  programId: string | null;
  decimals: number | null;
  pre: bigint | null;
  post: bigint | null;
}

export interface TokenBalances {
  /** In accountIndex order (deterministic). */
  accounts: TokenAccount[];
  byAddress: Map<string, TokenAccount>;
  decimalsByMint: Map<string, number>;
}

export function tokenBalances(meta: JsonObject | null, keys: readonly (string | null)[]): TokenBalances {
  const byIndex = new Map<number, TokenAccount>();
  const read = (list: unknown, side: 'pre' | 'post') => {
    for (const raw of asArray(list)) {
      const e = asObject(raw);
      const idx = toSafeInt(e?.accountIndex);
      if (!e || idx === null || idx < 0) continue;
      const ui = asObject(e.uiTokenAmount);
      const amount = toBigInt(ui?.amount);
      const decimals = toSafeInt(ui?.decimals);
      let acc = byIndex.get(idx);
      if (!acc) {
        acc = {
          address: idx < keys.length ? keys[idx] : null,
          accountIndex: idx,
          mint: null,
          owner: null,
          programId: null,
          decimals: null,
          pre: null,
          post: null,
        };
        byIndex.set(idx, acc);
      }
      // Post values win for descriptive fields; pre fills what post lacks (closed accounts).
      const prefer = side === 'post';
      const mint = asNonEmptyString(e.mint);
      const owner = asNonEmptyString(e.owner);
      const programId = asNonEmptyString(e.programId);
      if (mint && (prefer || !acc.mint)) acc.mint = mint;
      if (owner && (prefer || !acc.owner)) acc.owner = owner;
      if (programId && (prefer || !acc.programId)) acc.programId = programId;
      if (decimals !== null && decimals >= 0 && (prefer || acc.decimals === null)) acc.decimals = decimals;
      if (amount === null) continue;
      if (side === 'pre') acc.pre = (acc.pre ?? 0n) + amount;
      else acc.post = (acc.post ?? 0n) + amount;
    }
  };
  read(meta?.preTokenBalances, 'pre');
  read(meta?.postTokenBalances, 'post');

  const accounts = [...byIndex.values()].sort((x, y) => x.accountIndex - y.accountIndex);
  const byAddress = new Map<string, TokenAccount>();
  const decimalsByMint = new Map<string, number>();
  for (const acc of accounts) {
    if (acc.address && !byAddress.has(acc.address)) byAddress.set(acc.address, acc);
    if (acc.mint && acc.decimals !== null && !decimalsByMint.has(acc.mint)) decimalsByMint.set(acc.mint, acc.decimals);
  }
  return { accounts, byAddress, decimalsByMint };
}
