import type { Knex } from 'knex';

/** The part of a pool connection (a `pg` client) a statement uses. */
interface PgConnection {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/** The part of knex's client that lends the pool's connections. */
interface ConnectionLender {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

/**
 * Runs the read statements of a repository on the hot path (a page of history, a search) without
 * knex's per-call work: a builder or raw object, its compilation, the `?` → `$n` positioning and
 * the runner with its events, several percent of a short page's time. The SQL is written or built
 * as for `db.raw` (`?` placeholders); each distinct text is positioned by knex itself the first
 * time and kept, so the statement sent is the one `db.raw` sends. A call takes a connection from
 * the same pool (knex's acquire timeout and connection checks), sends the text and its values
 * with `pg`, and gives the rows back. Values are plain (strings, numbers, arrays, null, dates),
 * never knex raws or identifiers (`??`): those change the text, and the first call of such a
 * statement throws. Not for transactions: a statement takes a pool connection of its own.
 */
export class StatementCache {
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly db: Knex,
    /** Distinct texts kept; past this the cache starts over (texts come from fixed fragments, so few). */
    private readonly maxTexts = 1_000,
  ) {}

  /** The statement's text in pg's placeholders, as knex positions it. */
  text(sql: string, bindings: readonly Knex.RawBinding[]): string {
    let text = this.texts.get(sql);
    if (text === undefined) {
      const native = this.db.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
      if (native.bindings.length !== bindings.length) throw new Error(`StatementCache: ${bindings.length} values make ${native.bindings.length} bindings; identifiers and raws cannot be cached`);
      text = native.sql;
      if (this.texts.size >= this.maxTexts) this.texts.clear();
      this.texts.set(sql, text);
    }
    return text;
  }

  /** The rows of the statement `sql` (`?` placeholders) with `bindings`. */
  async rows<Row>(sql: string, bindings: readonly Knex.RawBinding[]): Promise<Row[]> {
    return this.nativeRows<Row>(this.text(sql, bindings), bindings);
  }

  /**
   * The rows of a statement written in pg's own placeholders (`$1`, `$2`, …), with its values as
   * they are: how a statement passes whole arrays (`$1::text[]`), which `db.raw` would spread
   * into one placeholder per element.
   */
  async nativeRows<Row>(text: string, values: readonly unknown[]): Promise<Row[]> {
    const lender = this.db.client as unknown as ConnectionLender;
    const connection = await lender.acquireConnection();
    try {
      // Text and values apart, not a config object: pg copies a config object's property
      // descriptors into a new object on every query.
      const { rows } = await connection.query(text, values as unknown[]);
      return rows as Row[];
    } finally {
      await lender.releaseConnection(connection);
    }
  }
}
