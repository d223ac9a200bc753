import { expect } from 'chai';
import { ArrayValueError, BinaryCopyWriter, copyInTransaction, createDb, type Knex } from '@chainpipe/db';
import { testEnv } from '@chainpipe/testing';

/**
 * Rows copied in PostgreSQL's binary format inside a knex transaction (what the candle store
 * inserts new candles with): each value reaches its column as what it is (Postgres renders them
 * back as text, compared with the values written out by hand), a row that breaks a constraint
 * fails the copy with Postgres's own error, and the transaction's connection is then rolled back
 * and used again as any other.
 */
describe('binary COPY FROM STDIN in a transaction (real Postgres)', () => {
  let db: Knex;
  const table = `copy_test_${process.pid}`;
  const COPY = `copy ${table} (id, name, big, ratio) from stdin (format binary)`;

  before(async () => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 1 });
    await db.raw(`create table if not exists ${table} (id integer primary key, name varchar(12), big bigint, ratio double precision)`);
  });

  after(async () => {
    await db.raw(`drop table if exists ${table}`);
    await db.destroy();
  });

  beforeEach(() => db.raw(`truncate ${table}`));

  const rowsOf = (w: BinaryCopyWriter, rows: [number, string, number, number | null][]) => {
    for (const [id, name, big, ratio] of rows) w.row(4, 40).int4(id).text(name).int8(big).float8(ratio);
    return w.finish();
  };
  const asText = async () => (await db.raw<{ rows: { t: string }[] }>(`select (id, name, big, ratio)::text as t from ${table} order by id`)).rows.map((r) => r.t);

  it('copies integers, texts (multi-byte among them), bigints past 32 bits, fractions and NULLs', async () => {
    // A writer that starts small grows as rows come.
    const data = rowsOf(new BinaryCopyWriter(8), [
      [-2_147_483_648, '1s', -9_007_199_254_740_991, -0.25],
      [7, 'é😀', 4_294_967_296, 101.23456789012344],
      [2_147_483_647, '', 1_795_500_000_123_456, null],
    ]);
    const copied = await db.transaction((trx) => copyInTransaction(trx, COPY, data));
    expect(copied).to.equal(3);
    expect(await asText()).to.deep.equal(['(-2147483648,1s,-9007199254740991,-0.25)', '(7,é😀,4294967296,101.23456789012344)', '(2147483647,"",1795500000123456,)']);
  });

  it('fails on a row that exists with the unique violation, rolls the transaction back, and the connection goes on', async () => {
    await db.transaction((trx) => copyInTransaction(trx, COPY, rowsOf(new BinaryCopyWriter(), [[1, 'a', 1, 1]])));
    const err = await db
      .transaction(async (trx) => {
        await trx.raw(`insert into ${table} (id, name) values (2, 'rolled back')`);
        await copyInTransaction(trx, COPY, rowsOf(new BinaryCopyWriter(), [[3, 'b', 3, 3], [1, 'again', 1, 1]]));
      })
      .then(
        () => undefined,
        (e: { code?: string }) => e,
      );
    expect(err?.code, 'unique_violation').to.equal('23505');
    expect(await asText(), 'nothing of the failed transaction').to.deep.equal(['(1,a,1,1)']);
    // The pool's one connection, after the failed copy and its rollback.
    await db.transaction((trx) => copyInTransaction(trx, COPY, rowsOf(new BinaryCopyWriter(), [[4, 'c', 4, 4]])));
    expect(await asText()).to.deep.equal(['(1,a,1,1)', '(4,c,4,4)']);
  });

  it('refuses values no column of the type could hold before anything is sent', () => {
    expect(() => new BinaryCopyWriter().row(1, 8).int4(2 ** 31)).to.throw(ArrayValueError);
    expect(() => new BinaryCopyWriter().row(1, 8).int4(1.5)).to.throw(ArrayValueError);
    expect(() => new BinaryCopyWriter().row(1, 12).int8(2 ** 53)).to.throw(ArrayValueError);
  });
});
