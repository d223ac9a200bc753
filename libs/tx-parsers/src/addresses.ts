import { chainInfo, normalizeAddress, type ChainFamily, type ChainType } from '@chainpipe/chains';
import type { NormalizedTx } from './types';

export interface AddressIndexEntry {
  address: string;
  /** Token contracts (or mints, TRC-10 ids) this address moved in the transaction. */
  tokens: string[];
}

/**
 * Every address a transaction involves, each once, in the one stored form of its chain family:
 * what search-by-address and monitoring match on. Token accounts (Solana) count too, so an
 * application may watch either the wallet or one of its token accounts.
 */
export function addressIndexEntries(tx: NormalizedTx, family: ChainFamily): AddressIndexEntry[] {
  const tokens = new Map<string, Set<string>>();
  const add = (address: string | null | undefined, token?: string | null) => {
    if (!address) return;
    const a = normalizeAddress(family, address);
    if (!a) return;
    let set = tokens.get(a);
    if (!set) tokens.set(a, (set = new Set()));
    if (token) set.add(normalizeAddress(family, token));
  };
  add(tx.sender);
  add(tx.receiver);
  add(tx.fee_payer);
  for (const t of tx.token_transfers) {
    const token = t.token_contract_address ?? t.mint;
    add(t.from_address, token);
    add(t.to_address, token);
    add(t.from_token_address, token);
    add(t.to_token_address, token);
  }
  for (const i of tx.internal_transactions) {
    add(i.from_address);
    add(i.to_address);
  }
  for (const d of tx.from_details) add(d.address);
  for (const d of tx.to_details) add(d.address);
  return [...tokens].map(([address, set]) => ({ address, tokens: [...set].sort() }));
}

/**
 * The parties of a transaction: the addresses of `addressIndexEntries` in its chain's family, so
 * what a search finds for an address is what monitoring matches it on.
 */
export function txParties(tx: NormalizedTx): string[] {
  return addressIndexEntries(tx, chainInfo(tx.chain_type as ChainType).family).map((e) => e.address);
}
