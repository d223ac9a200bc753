/**
 * `chain_type` as the market data services take it: any non-empty name, normalized to
 * lowercase, with well-known names folded into their virtual-machine family. The candlestick
 * service's table (market-data spec, "Enumerations and normalization"):
 * `eth`/`ethereum` → `evm`, `sol`/`solana` → `svm`, `trx`/`tron` → `tvm`, `btc`/`bitcoin` and
 * other UTXO coins → `utxo`, `atom` → `cosmos`, `sui`/`aptos`/`apt` → `move`.
 */
export const KLINE_CHAIN_TYPE_ALIASES: Readonly<Record<string, string>> = {
  eth: 'evm',
  ethereum: 'evm',
  sol: 'svm',
  solana: 'svm',
  trx: 'tvm',
  tron: 'tvm',
  btc: 'utxo',
  bitcoin: 'utxo',
  ltc: 'utxo',
  litecoin: 'utxo',
  doge: 'utxo',
  dogecoin: 'utxo',
  bch: 'utxo',
  'bitcoin cash': 'utxo',
  bitcoincash: 'utxo',
  atom: 'cosmos',
  sui: 'move',
  aptos: 'move',
  apt: 'move',
};

/** Trims and lowercases `value`, then maps it through `aliases`; undefined for a blank or non-string. */
export function normalizeChainTypeAlias(value: unknown, aliases: Readonly<Record<string, string>> = KLINE_CHAIN_TYPE_ALIASES): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  if (!v) return undefined;
  return Object.prototype.hasOwnProperty.call(aliases, v) ? aliases[v] : v;
}
