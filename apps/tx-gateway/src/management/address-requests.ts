import { canonicalAddress, chainInfo, parseChainType, type ChainType } from '@chainpipe/chains';
import type { AddressChange } from '@chainpipe/tx-store';

export { changeMessages, type AddressChange } from '@chainpipe/tx-store';
import type { HttpTxAddressesContains, HttpTxAddressesPatch, HttpTxAddressesWallets } from '@chainpipe/contracts';

/**
 * Monitored-address requests, after their JSON Schema passed: chain types resolved, every
 * address checked for its chain and turned into its stored form, duplicates folded. Each
 * function answers either the change to apply or the 400 text naming what is wrong.
 */

/** Upper bound of addresses (adds + removes, over every wallet group) in one request. */
export const MAX_ADDRESSES_PER_REQUEST = 1000;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };


/** Request bodies, generated from their schemas (`http/tx/addresses-*`). */
export type WalletsBody = HttpTxAddressesWallets;
export type PatchBody = HttpTxAddressesPatch;
export type ContainsBody = HttpTxAddressesContains;

const fail = (error: string): Parsed<never> => ({ ok: false, error });

function chainTypeOf(value: string, where: string): Parsed<ChainType> {
  const chainType = parseChainType(value);
  if (!chainType) return fail(`${where} ${JSON.stringify(value.slice(0, 40))} is not a supported chain type`);
  return { ok: true, value: chainType };
}

/** Checks and canonicalises a list; the error names the first bad address and where it was. */
function canonicalList(chainType: ChainType, addresses: readonly string[], where: string): Parsed<string[]> {
  const family = chainInfo(chainType).family;
  const out: string[] = [];
  for (const [i, raw] of addresses.entries()) {
    const check = canonicalAddress(family, raw);
    if (!check.ok) return fail(`${where}[${i}] ${JSON.stringify(raw.slice(0, 130))} is not a valid ${chainType} address: it ${check.reason}`);
    out.push(check.address);
  }
  return { ok: true, value: out };
}

function tooMany(count: number): Parsed<never> {
  return fail(`at most ${MAX_ADDRESSES_PER_REQUEST} addresses per request, got ${count}`);
}

/**
 * `wallets` of add and batch-delete: one change per chain type (groups naming the same chain
 * type are merged), each address once, in the order first given.
 */
export function parseWallets(body: WalletsBody, op: 'add' | 'remove'): Parsed<AddressChange[]> {
  const total = body.wallets.reduce((n, w) => n + w.address.length, 0);
  if (total > MAX_ADDRESSES_PER_REQUEST) return tooMany(total);
  const byChain = new Map<ChainType, Set<string>>();
  for (const [i, wallet] of body.wallets.entries()) {
    const chainType = chainTypeOf(wallet.chain_type, `wallets[${i}].chain_type`);
    if (!chainType.ok) return chainType;
    const list = canonicalList(chainType.value, wallet.address, `wallets[${i}].address`);
    if (!list.ok) return list;
    let set = byChain.get(chainType.value);
    if (!set) byChain.set(chainType.value, (set = new Set()));
    for (const a of list.value) set.add(a);
  }
  return {
    ok: true,
    value: [...byChain].map(([chainType, set]) => ({ chainType, adds: op === 'add' ? [...set] : [], removes: op === 'remove' ? [...set] : [] })),
  };
}

/**
 * The patch body (one chain type, adds and removes applied together). An address in both lists
 * is refused: the request would not say what the caller wants.
 */
export function parsePatch(body: PatchBody): Parsed<AddressChange> {
  const adds = body.adds ?? [];
  const removes = body.removes ?? [];
  if (adds.length + removes.length > MAX_ADDRESSES_PER_REQUEST) return tooMany(adds.length + removes.length);
  const chainType = chainTypeOf(body.chain_type, 'chain_type');
  if (!chainType.ok) return chainType;
  const a = canonicalList(chainType.value, adds, 'adds');
  if (!a.ok) return a;
  const r = canonicalList(chainType.value, removes, 'removes');
  if (!r.ok) return r;
  const addSet = new Set(a.value);
  const both = r.value.find((x) => addSet.has(x));
  if (both !== undefined) return fail(`address ${both} is in both adds and removes`);
  return { ok: true, value: { chainType: chainType.value, adds: [...addSet], removes: [...new Set(r.value)] } };
}

export function parseContains(body: ContainsBody): Parsed<{ chainType: ChainType; address: string }> {
  const chainType = chainTypeOf(body.chain_type, 'chain_type');
  if (!chainType.ok) return chainType;
  const check = canonicalAddress(chainInfo(chainType.value).family, body.address);
  if (!check.ok) return fail(`address ${JSON.stringify(body.address.slice(0, 130))} is not a valid ${chainType.value} address: it ${check.reason}`);
  return { ok: true, value: { chainType: chainType.value, address: check.address } };
}
