/** A request value after its checks: the value, or the spec's error text. */
export type Normalized<T> = { ok: true; value: T } | { ok: false; error: string };
