import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { ensureDatabase } from '@chainpipe/db';
import { assertTestDatabase, testEnv } from '@chainpipe/testing';

/**
 * `ensureDatabase` is called by every test worker and by apps starting side by side, so on a
 * fresh server many callers create the same database at the same moment. Postgres lets the
 * losers of such a race fail with duplicate_database or, when two got past its catalog check
 * together, with a unique violation on pg_database's name index; neither may fail the caller.
 */
describe('ensureDatabase under concurrent callers (real Postgres)', () => {
  const created: string[] = [];
  const urlOf = (name: string) => {
    const url = new URL(testEnv().databaseUrl);
    url.pathname = `/${name}`;
    assertTestDatabase(url.toString());
    return url.toString();
  };
  const maintenance = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const url = new URL(testEnv().databaseUrl);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const copiesOf = (name: string) => maintenance(async (c) => (await c.query('select count(*)::int as n from pg_database where datname = $1', [name])).rows[0].n as number);

  after(async () => {
    await maintenance(async (c) => {
      for (const name of created) await c.query(`drop database if exists "${name}"`);
    });
  });

  it('eight callers at once on a name not yet there, five names in turn: every call resolves, each database exists once', async function () {
    this.timeout(60_000);
    for (let round = 0; round < 5; round++) {
      const name = `chainpipe_test_ensure_${randomBytes(4).toString('hex')}`;
      created.push(name);
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => ensureDatabase(urlOf(name))));
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
      expect(await copiesOf(name)).to.equal(1);
    }
  });

  it('a plain CREATE DATABASE racing four callers: the callers resolve once the database is there', async function () {
    this.timeout(60_000);
    for (let round = 0; round < 5; round++) {
      const name = `chainpipe_test_ensure_${randomBytes(4).toString('hex')}`;
      created.push(name);
      const outside = maintenance((c) => c.query(`create database "${name}"`)).then(
        () => 'created',
        (err: { code?: string }) => err.code,
      );
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => ensureDatabase(urlOf(name))));
      // The plain CREATE either made it or lost to one of the callers, as Postgres reports a lost race.
      expect(['created', '42P04', '23505']).to.include(await outside);
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
      expect(await copiesOf(name)).to.equal(1);
    }
  });

  it('still refuses a name that is not a plain identifier, before connecting', async () => {
    let refused: unknown;
    try {
      await ensureDatabase('postgres://postgres@127.0.0.1:1/chainpipe_test"; drop database x; --');
    } catch (err) {
      refused = err;
    }
    expect(String(refused)).to.match(/refusing database name/);
  });
});
