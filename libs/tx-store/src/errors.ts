/**
 * What a failed store means for the caller. Postgres names the cause in its SQLSTATE:
 * - class 22 (data exception: value out of range, string too long, bad text) and class 23
 *   (integrity: not-null, check) except unique violations, and class 54 (program limit: an
 *   index row too large) are about the data: the same block fails the same way every time;
 * - anything else (connection loss, deadlock, serialization failure, shutdown, pool timeout, a
 *   unique violation lost in a race) may succeed when tried again.
 */
export type StoreFailure = 'data' | 'transient';

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function classifyStoreError(err: unknown): StoreFailure {
  const code = sqlState(err);
  if (!code) return 'transient';
  if (code === '23505') return 'transient';
  const cls = code.slice(0, 2);
  return cls === '22' || cls === '23' || cls === '54' ? 'data' : 'transient';
}

/**
 * A database failure of the write path, in a few hundred characters. knex puts the whole
 * statement with every bound value in front of the driver's message (megabytes for a large
 * block): that must never reach a log line, an error header or a DLQ record.
 */
export class StoreDbError extends Error {
  constructor(message: string, readonly code: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreDbError';
  }
}

const MAX_MESSAGE = 500;

export function compactDbError(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof StoreDbError) return err;
  const full = err.message;
  // knex: `<statement with values> - <driver message>`; the driver's message is the last part.
  const sep = full.lastIndexOf(' - ');
  const text = (sep >= 0 ? full.slice(sep + 3) : full).slice(0, MAX_MESSAGE);
  const fields = err as { code?: unknown; table?: unknown; column?: unknown; constraint?: unknown };
  const where = [
    typeof fields.code === 'string' ? `code ${fields.code}` : '',
    typeof fields.table === 'string' ? `table ${fields.table}` : '',
    typeof fields.column === 'string' ? `column ${fields.column}` : '',
    typeof fields.constraint === 'string' ? `constraint ${fields.constraint}` : '',
  ].filter(Boolean);
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  return new StoreDbError(where.length ? `${text} (${where.join(', ')})` : text, code, { cause: err });
}
