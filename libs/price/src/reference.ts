import type { HttpPriceChainItem, HttpPriceFiatList, HttpPriceTokenItem } from '@chainpipe/contracts';
/**
 * Rows of the reference tables and the items the price API answers with (spec, "Chain item",
 * "Token item", "Fiat item"). Optional fields without a value are left out, never sent as null.
 */

export interface ChainRow {
  id: number;
  name: string;
  short_name: string;
  /** bigint: pg hands it over as a string. */
  chain_id: string | number | null;
  chain_type: string;
  icon_url: string | null;
  explorer_url: string | null;
  gecko_network: string | null;
}

export interface TokenRow {
  id: number;
  chain_id: number;
  chain_name: string;
  chain_type: string;
  /** The chain's protocol chain id (bigint as string). */
  protocol_chain_id: string | number | null;
  name: string;
  symbol: string;
  decimals: number;
  logo_url: string | null;
  contract_address: string | null;
  is_native: boolean;
  external_id: string | null;
}

export interface FiatRow {
  id: number;
  code: string;
  name: string;
  symbol: string | null;
  icon_url: string | null;
  precision: number | null;
}

/** Items of the reference endpoints: the schemas' (`http/price/…`). */
export type ChainItem = HttpPriceChainItem;

export type TokenItem = HttpPriceTokenItem;

export type FiatItem = HttpPriceFiatList['items'][number];

export const toNumberOrNull = (v: string | number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

export function chainItem(row: ChainRow): ChainItem {
  const item: ChainItem = { id: row.id, name: row.name, short_name: row.short_name };
  const chainId = toNumberOrNull(row.chain_id);
  if (chainId !== null) item.chain_id = chainId;
  // The column holds the spec's chain types only (the seed and reference:import check them).
  if (row.chain_type) item.chain_type = row.chain_type as NonNullable<ChainItem['chain_type']>;
  if (row.icon_url) item.chain_icon_url = row.icon_url;
  if (row.explorer_url) item.explorer_url = row.explorer_url;
  return item;
}

export function tokenItem(row: TokenRow): TokenItem {
  const item: TokenItem = { id: row.id, name: row.name, symbol: row.symbol, decimals: row.decimals, chain_id: row.chain_id, chain_name: row.chain_name, is_native: row.is_native };
  if (row.logo_url) item.logo_url = row.logo_url;
  if (row.contract_address && !row.is_native) item.contract_address = row.contract_address;
  // Key order as the spec lists the fields.
  return {
    id: item.id,
    name: item.name,
    symbol: item.symbol,
    decimals: item.decimals,
    ...(item.logo_url ? { logo_url: item.logo_url } : {}),
    chain_id: item.chain_id,
    chain_name: item.chain_name,
    ...(item.contract_address ? { contract_address: item.contract_address } : {}),
    is_native: item.is_native,
  };
}

export function fiatItem(row: FiatRow): FiatItem {
  const item: FiatItem = { id: row.id, code: row.code, name: row.name, symbol: row.symbol ?? '', precision: row.precision ?? 2 };
  if (row.icon_url) return { id: item.id, code: item.code, name: item.name, symbol: item.symbol, icon_url: row.icon_url, precision: item.precision };
  return item;
}
