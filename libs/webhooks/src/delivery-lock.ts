import { createHash } from 'node:crypto';
import type { Knex } from '@chainpipe/db';

/** Namespace of the per-application webhook delivery locks ("tx" + 2; "tx" + 1 is the address lists'). */
const DELIVERY_LOCK_NAMESPACE = 0x74780002;

const statementNames = new Map<string, string>();

/** A prepared statement's name per text (a session refuses one name for two texts). */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `webhook_take_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * Who delivers for an application right now: a session-level advisory lock per application, held
 * on one pooled connection for as long as its POSTs run, with no transaction open. Taking the
 * locks of a whole consumer batch, reading those applications' configurations and whether they
 * have a queue is one statement; the locks go when they are released or, if the process dies,
 * with its connection, so another copy can take over at once.
 */
export class DeliveryLocks {
  private constructor(
    private readonly db: Knex,
    private readonly conn: unknown,
  ) {}

  /**
   * The session's statements, one after the other in the order they were asked for: drains and
   * background POSTs of one session release their applications while a take may be running,
   * and a pg client must not be given a query while it runs one.
   */
  private last: Promise<unknown> = Promise.resolve();
  private serial<T>(statement: () => Promise<T>): Promise<T> {
    const run = this.last.then(statement, statement);
    this.last = run.catch(() => undefined);
    return run;
  }

  /** Pins one connection of the pool for the locks; `close` gives it back. */
  static async open(db: Knex): Promise<DeliveryLocks> {
    return new DeliveryLocks(db, await db.client.acquireConnection());
  }

  /**
   * The configuration rows (`columns`, plus `queued` and `locked`) of `appIds` that have one;
   * `locked` is true where this session now holds the application's lock, false where another does.
   * `held`: applications whose lock this session already holds (taken by an earlier call and not
   * released): reported locked without taking it again, so one release still lets each go.
   */
  async take<T>(appIds: readonly string[], columns: string, held: readonly string[] = []): Promise<Array<T & { queued: boolean; locked: boolean }>> {
    // Held or not is decided here, and each part is looked up by its own `= any(…)` index
    // condition: the lock's CASE over `c.app_id = any($held)` searched the held array element by
    // element for every row in the named statement's generic plan (1,000 held applications:
    // ~6 ms a batch), and a join with the held set kept Postgres planning the statement anew on
    // every call (~0.1 ms); these two parts run on the statement's generic plan.
    const heldSet = new Set(held);
    const already = appIds.filter((a) => heldSet.has(a));
    const toTake = appIds.filter((a) => !heldSet.has(a));
    const queued = 'exists (select 1 from tx.webhook_queue q where q.app_id = c.app_id) as queued';
    const text = `select * from (
             select ${columns}, ${queued}, pg_try_advisory_lock($2, hashtext(c.app_id)) as locked from tx.app_configs c where c.app_id = any($3::text[])
             union all
             select ${columns}, ${queued}, true as locked from tx.app_configs c where c.app_id = any($1::text[])
           ) t order by app_id`;
    // Straight to the pinned client as a named statement: the live path runs it once per
    // consumer batch, so Postgres plans it once per session and no query builder runs each time.
    const client = this.conn as { query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Array<T & { queued: boolean; locked: boolean }> }> };
    const { rows } = await this.serial(() => client.query({ name: statementName(text), text, values: [already, DELIVERY_LOCK_NAMESPACE, toTake] }));
    return rows;
  }

  async release(appIds: readonly string[]): Promise<void> {
    if (appIds.length === 0) return;
    await this.serial(() => this.db.raw('select pg_advisory_unlock(?, hashtext(a)) from unnest(?::text[]) a', [DELIVERY_LOCK_NAMESPACE, [...appIds]]).connection(this.conn));
  }

  /**
   * Releases every lock this session holds and keeps the connection pinned (the live path's
   * session, reused batch after batch). A failure ends the connection, so no lock outlives it.
   */
  async releaseAll(): Promise<void> {
    try {
      await this.serial(() => this.db.raw('select pg_advisory_unlock_all()').connection(this.conn));
    } catch (err) {
      this.end();
      throw err;
    }
  }

  /** Releases every lock still held and returns the connection to the pool. */
  async close(): Promise<void> {
    try {
      await this.releaseAll();
    } finally {
      await this.db.client.releaseConnection(this.conn);
    }
  }

  /** Ends the session: the pool drops the connection (knex marks an ended one disposed) and Postgres every lock of it. */
  private end(): void {
    const client = this.conn as { end?: () => Promise<void> };
    client.end?.().catch(() => undefined);
  }
}
