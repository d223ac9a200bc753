import { CHAIN_TYPES, type StandardChainType } from '@chainpipe/chains';

/**
 * Operator imports of chains and tokens (`npm run admin -- reference:import`): JSON
 * `{"chains": [...], "tokens": [...]}`, or CSV with a header row holding one kind per file.
 * Rows are checked as a whole before anything is written; every problem is reported with its row.
 */

export interface ImportChain {
  name: string;
  short_name: string;
  chain_id: number | null;
  chain_type: StandardChainType;
  icon_url: string | null;
  explorer_url: string | null;
  gecko_network: string | null;
}

export interface ImportToken {
  /** Internal chain id, or a chain name (of the database or of this file). */
  chain: number | string;
  name: string;
  symbol: string;
  decimals: number;
  contract_address: string | null;
  logo_url: string | null;
  external_id: string | null;
}

export interface ReferenceImport {
  chains: ImportChain[];
  tokens: ImportToken[];
  errors: string[];
}

type Row = Record<string, unknown>;

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      if (row.some((f) => f !== '')) rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  row.push(field);
  if (row.some((f) => f !== '')) rows.push(row);
  return rows;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v).trim() || null);

function intOf(v: unknown): number | null | 'bad' {
  const t = text(v);
  if (t === null) return null;
  return /^\d{1,18}$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : 'bad';
}

function checkChain(r: Row, where: string, errors: string[]): ImportChain | undefined {
  const name = text(r.name);
  const chainType = text(r.chain_type)?.toLowerCase();
  const chainId = intOf(r.chain_id);
  const bad = (m: string) => errors.push(`${where}: ${m}`);
  if (!name || name.length > 100) bad('name is required (at most 100 characters)');
  if (!chainType || !(CHAIN_TYPES as readonly string[]).includes(chainType)) bad(`chain_type must be one of ${CHAIN_TYPES.join(', ')}`);
  if (chainId === 'bad') bad('chain_id must be an integer');
  if (chainType === 'evm' && chainId === null) bad('chain_id is required for evm chains');
  for (const f of ['icon_url', 'explorer_url'] as const) if (text(r[f]) && !/^https?:\/\//.test(text(r[f])!)) bad(`${f} must be an http(s) URL`);
  if (!name || !chainType || !(CHAIN_TYPES as readonly string[]).includes(chainType) || chainId === 'bad' || (chainType === 'evm' && chainId === null)) return undefined;
  return { name, short_name: text(r.short_name) ?? name, chain_id: chainId, chain_type: chainType as StandardChainType, icon_url: text(r.icon_url), explorer_url: text(r.explorer_url), gecko_network: text(r.gecko_network) };
}

function checkToken(r: Row, where: string, errors: string[]): ImportToken | undefined {
  const before = errors.length;
  const bad = (m: string) => errors.push(`${where}: ${m}`);
  const chainRaw = text(r.chain ?? r.chain_id);
  const name = text(r.name);
  const symbol = text(r.symbol);
  const decimals = intOf(r.decimals);
  if (!chainRaw) bad('chain is required (internal chain id or chain name)');
  if (!name || name.length > 200) bad('name is required (at most 200 characters)');
  if (!symbol || symbol.length > 50) bad('symbol is required (at most 50 characters)');
  if (decimals === null || decimals === 'bad' || decimals > 36) bad('decimals must be an integer from 0 to 36');
  const address = text(r.contract_address);
  if (address && address.length > 200) bad('contract_address is at most 200 characters');
  if (text(r.logo_url) && !/^https?:\/\//.test(text(r.logo_url)!)) bad('logo_url must be an http(s) URL');
  if (errors.length > before) return undefined;
  return {
    chain: /^\d+$/.test(chainRaw!) ? Number(chainRaw) : chainRaw!,
    name: name!,
    symbol: symbol!,
    decimals: decimals as number,
    contract_address: address,
    logo_url: text(r.logo_url),
    external_id: text(r.external_id),
  };
}

function rowsOfCsv(body: string): Row[] {
  const [header, ...lines] = parseCsv(body);
  if (!header) return [];
  const keys = header.map((h) => h.trim().toLowerCase());
  return lines.map((cells) => Object.fromEntries(keys.map((k, i) => [k, cells[i] ?? ''])));
}

export function parseReferenceImport(body: string, format: 'json' | 'csv', csvKind?: 'chains' | 'tokens'): ReferenceImport {
  const out: ReferenceImport = { chains: [], tokens: [], errors: [] };
  let chainRows: Row[] = [];
  let tokenRows: Row[] = [];
  if (format === 'json') {
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch (err) {
      return { ...out, errors: [`not JSON: ${(err as Error).message}`] };
    }
    const d = doc as { chains?: unknown; tokens?: unknown };
    if (!d || typeof d !== 'object' || (d.chains !== undefined && !Array.isArray(d.chains)) || (d.tokens !== undefined && !Array.isArray(d.tokens))) {
      return { ...out, errors: ['expected {"chains": [...], "tokens": [...]}'] };
    }
    chainRows = (d.chains as Row[] | undefined) ?? [];
    tokenRows = (d.tokens as Row[] | undefined) ?? [];
  } else if (csvKind === 'chains') chainRows = rowsOfCsv(body);
  else if (csvKind === 'tokens') tokenRows = rowsOfCsv(body);
  else return { ...out, errors: ['a CSV file holds one kind: say --kind chains or --kind tokens'] };
  chainRows.forEach((r, i) => {
    const c = r && typeof r === 'object' ? checkChain(r, `chains[${i}]`, out.errors) : void out.errors.push(`chains[${i}]: not an object`);
    if (c) out.chains.push(c);
  });
  tokenRows.forEach((r, i) => {
    const t = r && typeof r === 'object' ? checkToken(r, `tokens[${i}]`, out.errors) : void out.errors.push(`tokens[${i}]: not an object`);
    if (t) out.tokens.push(t);
  });
  return out;
}
