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
      // Named only when it reads as a URL, and then masked: the text may hold a password or key.
      const shown = maskUrlCredentials(r);
      return bad(shown === r && !URL_IN_TEXT.test(r) ? 'must be a URL (the value is not shown)' : `must be a URL, got ${JSON.stringify(shown)}`);
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
    if ('error' in res) problems.push(maskUrlCredentials(`${name} ${res.error}${f.doc ? ` (${f.doc})` : ''}`));
    else out[name] = res.value;
  }
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(out) as ConfigOf<S>;
}

/**
 * The config with secrets masked, for a boot log line: secret fields whole, and in every other
 * value the credentials of any URL it holds (`maskUrlCredentials`), whatever the field's kind (a
 * `network=url` list is a string).
 */
export function describeConfig<S extends Section>(section: S, config: ConfigOf<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(section)) {
    out[name] = f.secret ? '[redacted]' : maskValue((config as Record<string, unknown>)[name]);
  }
  return out;
}

function maskValue(value: unknown): unknown {
  if (typeof value === 'string') return maskUrlCredentials(value);
  if (Array.isArray(value)) return value.map(maskValue);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskValue(v)]));
  }
  return value;
}

/** Where a URL starts in a text: a scheme and `//`. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\//i;
/** A URL in a text, up to the next blank, comma, quote or bracket that cannot end a host. */
const URLS_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s,;"'<>`]+/gi;
const MASK = '***';
/** A query parameter whose name says it carries a credential (`apikey`, `access_token`, `sig`…). */
const SECRET_PARAM = /key|token|secret|pass|auth|sig|credential|session/i;

/**
 * A path segment or query value that reads as a key: 16 or more URL-safe characters with a digit
 * or both cases (QuickNode's `/<token>/`, Infura's `/v3/<id>`, Alchemy's `/v2/<key>`). Words
 * joined by hyphens (`ethereum-mainnet`, `coingecko`) stay readable.
 */
function looksLikeKey(text: string): boolean {
  return text.length >= 16 && /^[A-Za-z0-9._~%+=-]+$/.test(text) && (/\d/.test(text) || (/[a-z]/.test(text) && /[A-Z]/.test(text)));
}

function maskOneUrl(found: string): string {
  const schemeEnd = found.indexOf('://') + 3;
  const scheme = found.slice(0, schemeEnd);
  let rest = found.slice(schemeEnd);
  // Userinfo: up to the last '@' before the query (a password may hold '/' or '@' unescaped).
  const queryAt = rest.search(/[?#]/);
  const before = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const at = before.lastIndexOf('@');
  let userinfo = '';
  if (at >= 0) {
    const info = before.slice(0, at);
    const colon = info.indexOf(':');
    userinfo = `${colon >= 0 ? `${info.slice(0, colon)}:${MASK}` : MASK}@`;
    rest = rest.slice(at + 1);
  }
  const pathAt = rest.search(/[/?#]/);
  const host = pathAt < 0 ? rest : rest.slice(0, pathAt);
  let tail = pathAt < 0 ? '' : rest.slice(pathAt);
  const q = tail.search(/[?#]/);
  const path = q < 0 ? tail : tail.slice(0, q);
  let query = q < 0 ? '' : tail.slice(q);
  const maskedPath = path
    .split('/')
    .map((segment) => (looksLikeKey(segment) ? MASK : segment))
    .join('/');
  query = query.replace(/([?&;])([^=&#;]*)=([^&#;]*)/g, (whole, sep: string, name: string, value: string) =>
    value && (SECRET_PARAM.test(name) || looksLikeKey(value)) ? `${sep}${name}=${MASK}` : whole,
  );
  tail = maskedPath + query;
  return `${scheme}${userinfo}${host}${tail}`;
}

/**
 * The one rule for printing a URL the configuration holds (the boot line, config errors): the
 * userinfo's password (the whole userinfo when it is a bare token), path segments that read as
 * a key, and query values named as or reading as a credential become `***`. Works on any text,
 * URLs that do not parse included, so an error can quote what it refused.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(URLS_IN_TEXT, maskOneUrl);
}
