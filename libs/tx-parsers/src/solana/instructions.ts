import { decodeInstructionData } from './decode';
import { type JsonObject, asArray, asNonEmptyString, asObject, asString, toSafeInt } from './json';

/** One instruction, outer or inner, in either encoding, reduced to what the parser reads. */
export interface Instruction {
  programId: string | null;
  accounts: (string | null)[];
  /** jsonParsed `parsed.type`, or the name decoded from raw data for System / Token / Memo. */
  type: string | null;
  info: JsonObject | null;
  text: string | null;
  /** Index of the top-level instruction this one belongs to. */
  outerIndex: number;
  /** 1 for top-level instructions, the CPI stack height for inner ones. */
  depth: number;
  /** Position in execution order over the whole transaction (outer, then its inner ones…). */
  ordinal: number;
}

function resolveKey(v: unknown, keys: readonly (string | null)[]): string | null {
  const s = asNonEmptyString(v);
  if (s !== null) return s;
  const i = toSafeInt(v);
  return i !== null && i >= 0 && i < keys.length ? keys[i] : null;
}

function normalize(
  raw: unknown,
  keys: readonly (string | null)[],
  outerIndex: number,
  defaultDepth: number,
): Omit<Instruction, 'ordinal'> | null {
  const ix = asObject(raw);
  if (!ix) return null;
  const programId = resolveKey(ix.programId, keys) ?? resolveKey(ix.programIdIndex, keys);
  const accounts = asArray(ix.accounts).map((a) => resolveKey(a, keys));
  const height = toSafeInt(ix.stackHeight);
  const depth = height !== null && height > 0 ? height : defaultDepth;
  let type: string | null = null;
  let info: JsonObject | null = null;
  let text: string | null = null;
  const parsed = ix.parsed;
  if (typeof parsed === 'string') {
    // spl-memo in jsonParsed: the memo itself.
    type = 'memo';
    text = parsed;
  } else if (asObject(parsed)) {
    const p = parsed as JsonObject;
    type = asString(p.type);
    info = asObject(p.info);
  } else {
    const data = asString(ix.data);
    const decoded = data !== null ? decodeInstructionData(programId, data, accounts) : null;
    if (decoded) ({ type, info, text } = decoded);
  }
  return { programId, accounts, type, info, text, outerIndex, depth };
}

/**
 * Top-level and inner instructions flattened in execution order: each outer instruction followed
 * by the inner ones recorded for its index. Inner groups whose index matches no outer instruction
 * are appended at the end (in index order) rather than dropped.
 */
export function flattenInstructions(
  message: JsonObject | null,
  meta: JsonObject | null,
  keys: readonly (string | null)[],
): Instruction[] {
  const outer = asArray(message?.instructions);
  const groups = new Map<number, unknown[]>();
  for (const g of asArray(meta?.innerInstructions)) {
    const group = asObject(g);
    const index = toSafeInt(group?.index);
    if (!group || index === null || index < 0) continue;
    const list = groups.get(index) ?? [];
    list.push(...asArray(group.instructions));
    groups.set(index, list);
  }
  const out: Instruction[] = [];
  const push = (ix: Omit<Instruction, 'ordinal'> | null) => {
    if (ix) out.push({ ...ix, ordinal: out.length });
  };
  outer.forEach((raw, i) => {
    push(normalize(raw, keys, i, 1));
    for (const inner of groups.get(i) ?? []) push(normalize(inner, keys, i, 2));
  });
  const orphan = [...groups.keys()].filter((i) => i >= outer.length).sort((x, y) => x - y);
  for (const i of orphan) for (const inner of groups.get(i) ?? []) push(normalize(inner, keys, i, 2));
  return out;
}
