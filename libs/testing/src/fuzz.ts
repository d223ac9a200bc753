/**
 * Building blocks for deterministic fuzz tests: a seeded PRNG, a walk over every slot of a JSON
 * tree and the usual mutation operators. Each test keeps its own inputs, wrong values and
 * choice of operators; given the same seed it mutates the same way on every run.
 */

/** Uniform in [0, 1), like Math.random. */
export type Random = () => number;

/** mulberry32: small seeded PRNG, so every run draws the same sequence. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n); draws once. */
export function randomIndex(rnd: Random, n: number): number {
  return Math.floor(rnd() * n);
}

/** One element of a non-empty list; draws once. */
export function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[randomIndex(rnd, list.length)];
}

/** Deep copy of a test input (undefined, NaN and other non-JSON values survive). */
export function deepClone<T>(value: T): T {
  return structuredClone(value);
}

/** A place in a JSON tree: `parent[key]`, an object property or an array element. */
export interface Slot {
  parent: any;
  key: string | number;
}

/**
 * The order slots are listed in (the mutation a seed picks depends on it):
 * - `preorder`: recursive walk, each slot directly followed by the slots beneath it;
 * - `stack`: all slots of a container together, containers taken from a stack (last child first).
 */
export type SlotOrder = 'preorder' | 'stack';

/** Every slot of the tree under `root`, so a mutation can hit any depth. */
export function collectSlots(root: unknown, order: SlotOrder = 'preorder'): Slot[] {
  const out: Slot[] = [];
  const entries = (node: any): Array<[string | number, unknown]> => {
    const list: Array<[string | number, unknown]> = [];
    if (Array.isArray(node)) node.forEach((v, i) => list.push([i, v]));
    else if (node && typeof node === 'object') for (const k of Object.keys(node)) list.push([k, node[k]]);
    return list;
  };
  if (order === 'stack') {
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const node = stack.pop();
      for (const [key, value] of entries(node)) {
        out.push({ parent: node, key });
        stack.push(value);
      }
    }
  } else {
    const walk = (node: unknown): void => {
      for (const [key, value] of entries(node)) {
        out.push({ parent: node, key });
        walk(value);
      }
    };
    walk(root);
  }
  return out;
}

/** In-place mutations of one slot. The truncations return false (and draw nothing) when the value has another type. */
export interface MutationOperators {
  /** Removes the property, or the element (later elements shift down). */
  deleteKey(slot: Slot): void;
  /** Replaces the value with one of the wrong values; draws once. */
  wrongValue(slot: Slot, rnd: Random): void;
  /** Cuts an array value to a random shorter length; draws once. */
  truncateArray(slot: Slot, rnd: Random): boolean;
  /** Cuts a string value to a random shorter prefix; draws once. */
  truncateString(slot: Slot, rnd: Random): boolean;
  /** `truncateArray` or `truncateString`, whichever fits the value. */
  truncate(slot: Slot, rnd: Random): boolean;
}

/** The mutation operators, with `wrongValues` as the replacements `wrongValue` picks from. */
export function mutationOperators(wrongValues: readonly unknown[]): MutationOperators {
  const truncateArray = ({ parent, key }: Slot, rnd: Random): boolean => {
    const value = parent[key];
    if (!Array.isArray(value)) return false;
    value.length = randomIndex(rnd, value.length);
    return true;
  };
  const truncateString = ({ parent, key }: Slot, rnd: Random): boolean => {
    const value = parent[key];
    if (typeof value !== 'string') return false;
    parent[key] = value.slice(0, randomIndex(rnd, value.length));
    return true;
  };
  return {
    deleteKey({ parent, key }) {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    },
    wrongValue(slot, rnd) {
      slot.parent[slot.key] = pick(rnd, wrongValues);
    },
    truncateArray,
    truncateString,
    truncate: (slot, rnd) => truncateArray(slot, rnd) || truncateString(slot, rnd),
  };
}
