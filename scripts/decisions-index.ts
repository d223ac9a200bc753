import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The index by topic at the top of docs/decisions.md, made from the entries themselves: each
 * `#### DN. Title` under its `### Section` heading. A topic is a section's name before its colon,
 * without "service" (part one's "Token price service" and part two's "Token price service" are
 * one topic; "Address monitoring: records" joins "Address monitoring"), its entries in number
 * order whatever their order in the file. `npx tsx scripts/decisions-index.ts` rewrites the
 * index between its two markers; `--check` fails when it is stale (also checked by
 * test/contracts/decisions-index.test.ts, with a number heading two entries). A new entry needs
 * nothing but the script run again.
 */
export const DECISIONS_FILE = path.resolve(__dirname, '../docs/decisions.md');
export const INDEX_START = '<!-- index by topic: written by `npx tsx scripts/decisions-index.ts`, do not edit -->';
export const INDEX_END = '<!-- end of the index -->';

export interface DecisionEntry {
  number: number;
  title: string;
  section: string;
}

/** A section heading's topic: the name before its colon, without a trailing "service". */
export function topicOf(section: string): string {
  return section.split(':')[0].replace(/ service$/i, '').trim();
}

/** Every entry of the document with the section it stands in, in the document's order. */
export function decisionEntries(text: string): DecisionEntry[] {
  const entries: DecisionEntry[] = [];
  let section = '';
  let inIndex = false;
  for (const line of text.split('\n')) {
    if (line === INDEX_START) inIndex = true;
    if (line === INDEX_END) inIndex = false;
    if (inIndex) continue;
    const heading = /^### (.+)$/.exec(line);
    if (heading) section = heading[1].trim();
    const entry = /^#### D(\d+)\. (.+)$/.exec(line);
    if (!entry) continue;
    entries.push({ number: Number(entry[1]), title: entry[2].trim(), section });
  }
  return entries;
}

/** Numbers that head more than one entry (each must be one decision, cited by its number). */
export function repeatedNumbers(entries: readonly DecisionEntry[]): number[] {
  const seen = new Set<number>();
  return [...new Set(entries.filter((e) => seen.has(e.number) || !seen.add(e.number)).map((e) => e.number))];
}

/**
 * The index's lines (markers included): topics in the order they first appear, entries by number,
 * a number that heads two entries listed once.
 */
export function renderIndex(entries: readonly DecisionEntry[]): string {
  const topics = new Map<string, DecisionEntry[]>();
  const listed = new Set<number>();
  for (const e of entries) {
    if (listed.has(e.number)) continue;
    listed.add(e.number);
    const topic = topicOf(e.section) || 'Other';
    topics.set(topic, [...(topics.get(topic) ?? []), e]);
  }
  const lines = [INDEX_START, ''];
  for (const [topic, list] of topics) {
    lines.push(`- **${topic}**`);
    for (const e of [...list].sort((a, b) => a.number - b.number)) lines.push(`  - [D${e.number}](#d${e.number}) ${e.title}`);
  }
  lines.push('', INDEX_END);
  return lines.join('\n');
}

/** The document with its index written anew (put before the first `## ` heading the first time). */
export function withIndex(text: string): string {
  const index = renderIndex(decisionEntries(text));
  const start = text.indexOf(INDEX_START);
  const end = text.indexOf(INDEX_END);
  if (start >= 0 && end > start) return text.slice(0, start) + index + text.slice(end + INDEX_END.length);
  const firstPart = text.search(/^## /m);
  if (firstPart < 0) throw new Error('docs/decisions.md: no "## " heading to put the index before');
  return `${text.slice(0, firstPart)}## Index by topic\n\n${index}\n\n${text.slice(firstPart)}`;
}

if (require.main === module) {
  const text = readFileSync(DECISIONS_FILE, 'utf8');
  const wanted = withIndex(text);
  const name = path.relative(process.cwd(), DECISIONS_FILE);
  if (process.argv.includes('--check')) {
    if (text !== wanted) {
      console.error(`${name}: the index by topic is stale: run npx tsx scripts/decisions-index.ts`);
      process.exit(1);
    }
    console.log(`${name}: index up to date`);
  } else if (text !== wanted) {
    writeFileSync(DECISIONS_FILE, wanted);
    console.log(`wrote the index of ${name}`);
  } else {
    console.log(`${name}: index up to date`);
  }
}
