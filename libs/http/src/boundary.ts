import type { ErrorObject } from 'ajv';
import type { RequestHandler } from 'express';

/**
 * What no request value may carry past the boundary, whatever its schema says: Postgres text and
 * jsonb cannot hold a NUL character (`\u0000`), so such a string would fail its query instead of
 * answering. Integers are bounded by the schemas (`maximum` for JSON numbers, `decimalMaximum` for
 * digit strings, both the column's range), checked with the rest of the schema.
 */
export const NUL_KEYWORD = 'nul';

/** The schema keywords whose failure means "no stored row can hold this value", not "malformed". */
const UNSTORABLE_KEYWORDS = new Set([NUL_KEYWORD, 'decimalMaximum']);

/** True when some string or object key of `value` holds a NUL; allocates nothing. */
export function holdsNul(node: unknown): boolean {
  if (typeof node === 'string') return node.includes('\u0000');
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) if (holdsNul(node[i])) return true;
    return false;
  }
  if (node && typeof node === 'object') {
    for (const k in node) {
      if (!Object.prototype.hasOwnProperty.call(node, k)) continue;
      if (k.includes('\u0000') || holdsNul((node as Record<string, unknown>)[k])) return true;
    }
  }
  return false;
}

/** Every string (and object key) of `value` holding a NUL, as ajv-shaped errors naming where. */
export function nulErrors(value: unknown, instancePath = ''): ErrorObject[] {
  // Every request crosses this check: the common case (no NUL anywhere) is one walk that builds nothing.
  if (!holdsNul(value)) return [];
  const out: ErrorObject[] = [];
  // The path of a value is only spelled out when it holds a NUL.
  const segments: string[] = [];
  const record = (last?: string) => {
    const at = [...segments, ...(last === undefined ? [] : [last])].map((k) => `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
    out.push({ instancePath: instancePath + at, schemaPath: '#/boundary', keyword: NUL_KEYWORD, params: {}, message: 'must not contain NUL characters' });
  };
  const walk = (node: unknown): void => {
    if (typeof node === 'string') {
      if (node.includes('\u0000')) record();
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        segments.push(String(i));
        walk(node[i]);
        segments.pop();
      }
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k.includes('\u0000')) record(k);
        segments.push(k);
        walk(v);
        segments.pop();
      }
    }
  };
  walk(value);
  return out;
}

/**
 * A route's parameters that only look a stored row up, and its answer when one of them holds a
 * value no row can hold (a NUL, an integer past its column): such a value matches nothing, so the
 * spec's "not found" answers, not a 400.
 */
export interface LookupParams {
  params: readonly string[];
  notFound: RequestHandler;
}

/** True when every error is an unstorable value of one of the lookup parameters. */
export function onlyUnmatchableLookups(errors: readonly ErrorObject[], lookup: LookupParams | undefined): boolean {
  if (!lookup || errors.length === 0) return false;
  return errors.every((e) => UNSTORABLE_KEYWORDS.has(e.keyword) && lookup.params.includes(e.instancePath.split('/')[1] ?? ''));
}
