/**
 * Configuration from environment variables, declared per concern and validated once at boot.
 *
 * A section is a map of env var name → field. `loadConfig` reads every field of every section,
 * collects every problem and throws one `ConfigError` listing all of them, so an operator fixes
 * a deployment in one go instead of one variable per restart. Nothing outside an app's
 * `config.ts` reads `process.env`.
 */

export interface Field<T> {
  readonly kind: string;
  readonly doc: string;
  readonly secret: boolean;
  /** Returns the parsed value or an error text. `raw` is undefined when the variable is unset. */
  parse(raw: string | undefined): { value: T } | { error: string };
}

interface FieldOptions<T> {
  default?: T;
  doc?: string;
}

type Parsed<T> = { value: T } | { error: string };
const ok = <T>(value: T): Parsed<T> => ({ value });
const bad = (error: string): Parsed<never> => ({ error });

function field<T>(kind: string, opts: FieldOptions<T> & { secret?: boolean }, convert: (raw: string) => Parsed<T>): Field<T> {
  return {
    kind,
    doc: opts.doc ?? '',
    secret: opts.secret ?? false,
    parse(raw) {
      if (raw === undefined || raw === '') {
        return opts.default !== undefined ? ok(opts.default) : bad('is required');
      }
      return convert(raw);
    },
  };
}

export const str = (opts: FieldOptions<string> = {}): Field<string> => field('string', opts, ok);

/** A secret: required unless a default is given explicitly, and never printed. */
export const secret = (opts: FieldOptions<string> = {}): Field<string> => field('secret', { ...opts, secret: true }, ok);

export const int = (opts: FieldOptions<number> & { min?: number; max?: number } = {}): Field<number> =>
  field<number>('int', opts, (r) => {
    if (!/^-?\d+$/.test(r.trim())) return bad(`must be an integer, got ${JSON.stringify(r)}`);
    const n = Number(r.trim());
    if (!Number.isSafeInteger(n)) return bad(`must be a safe integer, got ${r}`);
    if (opts.min !== undefined && n < opts.min) return bad(`must be >= ${opts.min}, got ${n}`);
    if (opts.max !== undefined && n > opts.max) return bad(`must be <= ${opts.max}, got ${n}`);
    return ok(n);
  });

export const bool = (opts: FieldOptions<boolean> = {}): Field<boolean> =>
  field<boolean>('bool', opts, (r) => {
    const v = r.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return ok(true);
    if (['0', 'false', 'no', 'off'].includes(v)) return ok(false);
    return bad(`must be a boolean (true/false/1/0), got ${JSON.stringify(r)}`);
  });

export const url = (opts: FieldOptions<string> & { protocols?: string[] } = {}): Field<string> =>
  field<string>('url', opts, (r) => {
    let u: URL;
    try {
      u = new URL(r);
    } catch {
      return bad(`must be a URL, got ${JSON.stringify(r)}`);
    }
    const protocol = u.protocol.replace(/:$/, '');
    if (opts.protocols && !opts.protocols.includes(protocol)) return bad(`must use one of ${opts.protocols.join(', ')}, got ${protocol}`);
    return ok(r);
  });

export const oneOf = <T extends string>(values: readonly T[], opts: FieldOptions<T> = {}): Field<T> =>
  field<T>('enum', opts, (r) =>
    (values as readonly string[]).includes(r) ? ok(r as T) : bad(`must be one of ${values.join(', ')}, got ${JSON.stringify(r)}`),
  );

/** Comma-separated list of non-empty strings. */
export const list = (opts: FieldOptions<string[]> = {}): Field<string[]> =>
  field<string[]>('list', opts, (r) => {
    const items = r.split(',').map((s) => s.trim()).filter(Boolean);
    return items.length ? ok(items) : bad('must list at least one value');
  });

export type Section = Record<string, Field<unknown>>;
export type ConfigOf<S extends Section> = { readonly [K in keyof S]: S[K] extends Field<infer T> ? T : never };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates every field; throws one ConfigError naming every bad variable. */
export function loadConfig<S extends Section>(section: S, env: Record<string, string | undefined>): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, f] of Object.entries(section)) {
    const res = f.parse(env[name]);
    if ('error' in res) problems.push(`${name} ${res.error}${f.doc ? ` (${f.doc})` : ''}`);
    else out[name] = res.value;
  }
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(out) as ConfigOf<S>;
}

/** The config with secrets masked, for a boot log line. */
export function describeConfig<S extends Section>(section: S, config: ConfigOf<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(section)) {
    out[name] = f.secret ? '[redacted]' : (config as Record<string, unknown>)[name];
  }
  return out;
}
