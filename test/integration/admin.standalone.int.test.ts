import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { createKeyResolver, parseApiKey } from '@chainpipe/http';
import { REPO_ROOT, testEnv } from '@chainpipe/testing';
import { UsageError, runCommand } from '../../apps/admin/src/commands';

const run = promisify(execFile);

describe('admin command (real Postgres)', () => {
  let db: Knex;
  let repo: ApiKeyRepository;
  const appId = `adm-${randomBytes(4).toString('hex')}`;

  before(() => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 2 });
    repo = new ApiKeyRepository(db);
  });
  after(() => db.destroy());

  it('creates an application whose key is printed once, stored only as a hash, and resolves', async () => {
    const { stdout } = await run(process.execPath, ['--require', 'tsx/cjs', 'apps/admin/src/main.ts', 'app:create', '--name', 'Admin test', '--id', appId, '--quiet'], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: testEnv().databaseUrl },
    });
    const token = stdout.trim();
    const parsed = parseApiKey(token)!;
    expect(parsed, 'a cpk_ key on stdout').to.not.equal(undefined);
    const row = await db('core.api_keys').where({ key_id: parsed.keyId }).first();
    expect(row.app_id).to.equal(appId);
    expect(JSON.stringify(row)).to.not.contain(parsed.secret);
    const resolve = createKeyResolver((id) => repo.findKey(id), { cacheTtlMs: 0 });
    expect(await resolve(token)).to.deep.equal({ appId, keyId: parsed.keyId, role: 'customer' });
  });

  it('issues operator keys with --role operator; keys are customers\' unless said, and other roles are refused', async () => {
    const lines: string[] = [];
    const out = { out: (l: string) => lines.push(l) };
    const resolve = createKeyResolver((id) => repo.findKey(id), { cacheTtlMs: 0 });
    expect(await runCommand(['key:create', '--app', appId, '--role', 'operator', '--quiet'], repo, out)).to.equal(0);
    const operator = lines[0];
    expect(await resolve(operator)).to.deep.equal({ appId, keyId: parseApiKey(operator)!.keyId, role: 'operator' });
    expect((await db('core.api_keys').where({ key_id: parseApiKey(operator)!.keyId }).first()).role).to.equal('operator');
    lines.length = 0;
    const opsApp = `${appId}-ops`;
    expect(await runCommand(['app:create', '--name', 'Operators', '--id', opsApp, '--role', 'operator'], repo, out)).to.equal(0);
    expect(lines).to.include('role:    operator');
    let err: unknown;
    await runCommand(['key:create', '--app', appId, '--role', 'admin'], repo, out).catch((e) => (err = e));
    expect(err).to.be.instanceOf(UsageError);
    expect((err as Error).message).to.equal('--role must be one of customer, operator');
    // The table refuses a role the command would not write.
    const bad = await db('core.api_keys').insert({ key_id: `k${randomBytes(6).toString('hex')}`, app_id: appId, secret_hash: '0'.repeat(64), role: 'root' }).catch((e: Error) => e);
    expect(bad).to.be.instanceOf(Error);
    expect(String((bad as Error).message)).to.contain('api_keys_role_check');
    await runCommand(['key:revoke', '--key', parseApiKey(operator)!.keyId], repo, out);
  });

  it('revokes keys and disables applications, which the resolver honours', async () => {
    const lines: string[] = [];
    const out = { out: (l: string) => lines.push(l) };
    expect(await runCommand(['key:create', '--app', appId, '--label', 'second', '--quiet'], repo, out)).to.equal(0);
    const second = lines[0];
    const resolve = createKeyResolver((id) => repo.findKey(id), { cacheTtlMs: 0 });
    expect(await resolve(second)).to.have.property('appId', appId);
    expect(await runCommand(['key:revoke', '--key', parseApiKey(second)!.keyId], repo, out)).to.equal(0);
    expect(await resolve(second)).to.equal(undefined);
    expect(await runCommand(['key:revoke', '--key', parseApiKey(second)!.keyId], repo, out)).to.equal(1);

    lines.length = 0;
    await runCommand(['key:create', '--app', appId, '--quiet'], repo, out);
    const third = lines[0];
    expect(await runCommand(['app:disable', '--app', appId], repo, out)).to.equal(0);
    expect(await resolve(third)).to.equal(undefined);
    expect(await runCommand(['app:enable', '--app', appId], repo, out)).to.equal(0);
    expect(await resolve(third)).to.have.property('appId', appId);
    lines.length = 0;
    await runCommand(['app:list'], repo, out);
    expect(lines.find((l) => l.startsWith(appId + '\t'))).to.equal(`${appId}\tactive\tkeys=2\tAdmin test`);
  });

  it('refuses unknown commands, missing options and bad ids with a usage error', async () => {
    const out = { out: () => undefined };
    for (const argv of [['bogus'], ['app:create'], ['app:create', '--name', 'x', '--id', 'a b'], ['key:create']]) {
      let err: unknown;
      await runCommand(argv, repo, out).catch((e) => (err = e));
      expect(err, argv.join(' ')).to.be.instanceOf(UsageError);
    }
    const cli = await run(process.execPath, ['--require', 'tsx/cjs', 'apps/admin/src/main.ts', 'bogus'], { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: testEnv().databaseUrl } }).catch((e) => e);
    expect(cli.code).to.equal(2);
    expect(cli.stderr).to.match(/unknown command bogus/);
  });
});
