/**
 * Narrowing shared by every family's parser: raw node JSON is `unknown` until checked, and a
 * check never throws (parsers must survive any input). Family modules add their own accessors.
 */
export type JsonObject = Record<string, unknown>;

/** A plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value if it is an array, else an empty one. */
export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
