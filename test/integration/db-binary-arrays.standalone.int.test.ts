import { expect } from 'chai';
import { ArrayValueError, createDb, float8Array, float8Column, int4Array, int4Column, int8Array, int8Column, type Knex } from '@chainpipe/db';
import { testEnv } from '@chainpipe/testing';

/**
 * Number arrays sent as binary parameters must reach Postgres as the values they are: each
 * array goes in, Postgres sends it back as text (its own rendering, compared with the values
 * written out by hand), and values no column of the type could hold are refused before sending.
 */
describe('binary array parameters (real Postgres)', () => {
  let db: Knex;

  before(() => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 1 });
  });

  after(async () => {
    await db.destroy();
  });

  const asText = async (param: Buffer, cast: string): Promise<string> => {
    const { rows } = await db.raw<{ rows: { t: string }[] }>(`select (?::${cast})::text as t`, [param]);
    return rows[0].t;
  };

  it('float8: fractions, negatives, extremes, NaN, infinities and NULLs', async () => {
    const values = [1.5, -0.25, 0, 1e-300, 1.7976931348623157e308, 101.23456789012344, NaN, Infinity, -Infinity, null, 42];
    expect(await asText(float8Array(values), 'float8[]')).to.equal('{1.5,-0.25,0,1e-300,1.7976931348623157e+308,101.23456789012344,NaN,Infinity,-Infinity,NULL,42}');
  });

  it('int8: zero, negatives, values past 32 bits and the largest safe integers', async () => {
    const values = [0, 1, -1, 4_294_967_295, 4_294_967_296, -4_294_967_297, 1_795_500_000_123_456, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    expect(await asText(int8Array(values), 'bigint[]')).to.equal('{0,1,-1,4294967295,4294967296,-4294967297,1795500000123456,9007199254740991,-9007199254740991}');
  });

  it('int4: the range of integer', async () => {
    expect(await asText(int4Array([0, 7, -2_147_483_648, 2_147_483_647]), 'int[]')).to.equal('{0,7,-2147483648,2147483647}');
  });

  it('columns of a field of each row: the same parameters as arrays of the values', async () => {
    const rows = [
      { id: 1, at: 4_294_967_296, price: 1.5 },
      { id: -2, at: -1, price: null },
      { id: 2_147_483_647, at: Number.MAX_SAFE_INTEGER, price: -0.25 },
    ];
    expect(float8Column(rows, (r) => r.price)).to.deep.equal(float8Array(rows.map((r) => r.price)));
    expect(int8Column(rows, (r) => r.at)).to.deep.equal(int8Array(rows.map((r) => r.at)));
    expect(int4Column(rows, (r) => r.id)).to.deep.equal(int4Array(rows.map((r) => r.id)));
    expect(await asText(float8Column(rows, (r) => r.price), 'float8[]')).to.equal('{1.5,NULL,-0.25}');
    expect(() => int4Column(rows, (r) => r.at)).to.throw(ArrayValueError);
  });

  it('empty arrays, also unnested side by side with others', async () => {
    expect(await asText(float8Array([]), 'float8[]')).to.equal('{}');
    const { rows } = await db.raw<{ rows: unknown[] }>('select * from unnest(?::int[], ?::bigint[], ?::float8[])', [int4Array([]), int8Array([]), float8Array([])]);
    expect(rows).to.deep.equal([]);
  });

  it('refuses fractions and values out of range with the SQLSTATE Postgres gives them', () => {
    for (const build of [() => int8Array([1, 2.5]), () => int8Array([2 ** 53]), () => int4Array([2 ** 31]), () => int4Array([0.5]), () => int8Array([NaN])]) {
      expect(build).to.throw(ArrayValueError).with.property('code', '22003');
    }
  });

  it('a cast to another element type is refused by Postgres, not misread', async () => {
    let refused: unknown;
    await db.raw('select ?::bigint[]', [int4Array([1])]).catch((err: unknown) => (refused = err));
    expect((refused as Error | undefined)?.message).to.match(/binary data has array element type 23 \(integer\) instead of expected 20 \(bigint\)/);
  });
});
