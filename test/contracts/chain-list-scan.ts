import { CHAIN_CATALOG, type CatalogChain, type SwapProviderName } from '@chainpipe/chains';

/**
 * Finds hand-written lists of chains in source text: a literal (`[...]`, `{...}`, or a run of
 * `case` labels) naming at least `MIN_NAMES` different chains of the catalog in one vocabulary:
 * network names (`'ethereum-mainnet'`), chain names and aliases (`'ethereum'`, `'eth'`) or one
 * provider's names (`'matic'`, `ETH:`), each spelt as the catalog spells it (coin symbols are
 * upper case, THORChain's chains too: `'ETH'` in a list of symbols is no chain name). One chain
 * named in code (a default, a special case) is not a list; the vocabularies come from the
 * catalog, so a new row widens the scan too.
 */
export const MIN_NAMES = 3;

export interface ChainListHit {
  line: number;
  vocabulary: string;
  chains: string[];
}

interface Vocabulary {
  name: string;
  /** name as the catalog writes it (exact spelling) → the chain it names */
  names: Map<string, string>;
}

function vocabularies(catalog: readonly CatalogChain[]): Vocabulary[] {
  const vocab = (name: string, entries: [string, string][]): Vocabulary => ({ name, names: new Map(entries) });
  const providers = [...new Set(catalog.flatMap((c) => Object.keys(c.providers)))] as SwapProviderName[];
  return [
    vocab('network names', catalog.flatMap((c) => c.networks.map((n): [string, string] => [n.network, c.chain]))),
    vocab('chain names', catalog.flatMap((c) => [c.chain, ...c.aliases].map((n): [string, string] => [n, c.chain]))),
    ...providers.map((p) => vocab(`${p} names`, catalog.flatMap((c) => (c.providers[p] === undefined ? [] : [[c.providers[p]!, c.chain] as [string, string]])))),
  ];
}

interface Span {
  start: number;
  end: number;
  /** The spans directly inside it (a table's rows). */
  children: Span[];
}

/**
 * Spans of the text that may make one literal list: every pair of brackets or braces, and runs of
 * `case` labels. A list is what a span holds itself, or an array in its elements (a table of
 * rows), never deeper: a function body naming three chains in three blocks is no list.
 */
function listSpans(text: string): Span[] {
  const spans: Span[] = [];
  const open: Span[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '[' || ch === '{') open.push({ start: i, end: -1, children: [] });
    else if ((ch === ']' || ch === '}') && open.length) {
      const span = open.pop()!;
      span.end = i + 1;
      open.at(-1)?.children.push(span);
      spans.push(span);
    }
  }
  const caseRun = /(?:\bcase\s+(['"`])[^'"`\n]*\1\s*:[^\n]*\n?\s*)+/g;
  for (let m = caseRun.exec(text); m; m = caseRun.exec(text)) spans.push({ start: m.index, end: m.index + m[0].length, children: [] });
  return spans;
}

/**
 * The text a span holds itself: an array with its elements (a table of rows), anything else
 * (an object, a block, a run of cases) without its nested spans.
 */
function shallowText(text: string, span: Span): string {
  let out = text.slice(span.start, span.end);
  const blank = (inner: Span) => {
    const from = inner.start - span.start;
    const to = inner.end - span.start;
    out = out.slice(0, from) + ' '.repeat(to - from) + out.slice(to);
  };
  for (const child of span.children) {
    if (text[span.start] === '[') child.children.forEach(blank);
    else blank(child);
  }
  return out;
}

/** Quoted strings and object keys (`key:`) of a piece of source, with their offsets. */
function namesIn(text: string, offset: number): { word: string; at: number }[] {
  const out: { word: string; at: number }[] = [];
  const token = /(['"`])([^'"`\n\\]{1,40})\1|\b([A-Za-z][A-Za-z0-9_-]{0,39})\s*:(?!:)/g;
  for (let m = token.exec(text); m; m = token.exec(text)) out.push({ word: m[2] ?? m[3], at: offset + m.index });
  return out;
}

/** The hand-written chain lists of a source file's text. */
export function chainListsIn(text: string, catalog: readonly CatalogChain[] = CHAIN_CATALOG): ChainListHit[] {
  const vocabs = vocabularies(catalog);
  const hits = new Map<string, ChainListHit>();
  const lineOf = (at: number) => text.slice(0, at).split('\n').length;
  // comments name chains in prose: blanked, keeping offsets
  const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, ' '));
  for (const span of listSpans(code)) {
    const words = namesIn(shallowText(code, span), span.start);
    for (const v of vocabs) {
      const chains = new Set(words.map(({ word }) => v.names.get(word)).filter((c): c is string => c !== undefined));
      if (chains.size < MIN_NAMES) continue;
      const line = lineOf(span.start);
      const key = `${line}:${v.name}`;
      const prev = hits.get(key);
      if (!prev || prev.chains.length < chains.size) hits.set(key, { line, vocabulary: v.name, chains: [...chains].sort() });
    }
  }
  return [...hits.values()].sort((a, b) => a.line - b.line);
}
