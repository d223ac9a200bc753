import type { ChainFamily } from './catalog';

/** A transaction hash in its stored form: EVM `0x` + lowercase hex; Tron and Bitcoin lowercase hex without `0x`; Solana as given. */
export function normalizeTxHash(family: ChainFamily, hash: string): string {
  const h = hash.trim();
  const bare = /^0x/i.test(h) ? h.slice(2) : h;
  switch (family) {
    case 'evm':
      return '0x' + bare.toLowerCase();
    case 'tvm':
    case 'utxo':
      return bare.toLowerCase();
    case 'svm':
    default:
      return h;
  }
}

/**
 * Whether a normalized hash can name a transaction of the family at all (EVM `0x` + 64 hex, Tron
 * and Bitcoin 64 hex, Solana a Base58 signature). Others need no look-up: nothing has that hash.
 */
export function isPlausibleTxHash(family: ChainFamily, hash: string): boolean {
  switch (family) {
    case 'evm':
      return /^0x[0-9a-f]{64}$/.test(hash);
    case 'tvm':
    case 'utxo':
      return /^[0-9a-f]{64}$/.test(hash);
    case 'svm':
      return /^[1-9A-HJ-NP-Za-km-z]{64,90}$/.test(hash);
    default:
      return false;
  }
}
