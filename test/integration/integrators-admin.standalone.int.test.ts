import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { parseApiKey, secretMatches } from '@chainpipe/http';
import { IntegratorRepository, MAX_KEYS_PER_INTEGRATOR, OrderRepository } from '@chainpipe/order-store';
import { REPO_ROOT, testEnv } from '@chainpipe/testing';
import { UsageError } from '../../apps/admin/src/commands';
import { runIntegratorCommand } from '../../apps/admin/src/integrator-commands';
import { orderFixture } from './order-fixtures';

const run = promisify(execFile);

describe('admin: aggregator integrators and keys (real Postgres)', () => {
  let db: Knex;
  let repo: IntegratorRepository;
  const lines: string[] = [];
  const io = { out: (l: string) => lines.push(l) };
  const cmd = async (...argv: string[]) => {
    lines.length = 0;
    return runIntegratorCommand(argv, repo, io);
  };

  before(() => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 4 });
    repo = new IntegratorRepository(db);
  });
  after(() => db.destroy());

  it('creates an integrator with a key printed once, stored as sha256 only, with its rate', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--require', 'tsx/cjs', 'apps/admin/src/main.ts', 'integrator:create', '--name', 'Wallet Co', '--fee-rate', '0.25', '--label', 'prod'],
      { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: testEnv().databaseUrl } },
    );
    const id = /integrator_id: (\d+)/.exec(stdout)![1];
    const token = /api_key: +(\S+)/.exec(stdout)![1];
    expect(stdout).to.contain('fee_rate:      0.25 %');
    const parsed = parseApiKey(token)!;
    const row = await db('agg.integrator_keys').where({ key_id: parsed.keyId }).first();
    expect(row).to.include({ integrator_id: id, fee_rate_bp: 25, label: 'prod', is_enabled: true });
    expect(JSON.stringify(row)).to.not.contain(parsed.secret);
    const stored = (await repo.findKey(parsed.keyId))!;
    expect(stored).to.include({ integratorId: id, feeRateBp: 25, keyEnabled: true, integratorActive: true });
    expect(secretMatches(parsed.secret, stored.secretHash)).to.equal(true);
    expect(secretMatches(parsed.secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), stored.secretHash)).to.equal(false);
  });

  it('disables, enables and deletes keys and integrators; the stored state follows at once', async () => {
    expect(await cmd('integrator:create', '--name', 'Switches', '--quiet')).to.equal(0);
    const id = lines[0];
    expect(await cmd('integrator:key:create', '--integrator', id, '--fee-rate', '1', '--quiet')).to.equal(0);
    const keyId = parseApiKey(lines[0])!.keyId;
    expect((await repo.findKey(keyId))!.feeRateBp).to.equal(100);

    expect(await cmd('integrator:key:disable', '--key', keyId)).to.equal(0);
    expect((await repo.findKey(keyId))!.keyEnabled).to.equal(false);
    expect(await cmd('integrator:key:enable', '--key', keyId)).to.equal(0);
    expect((await repo.findKey(keyId))!.keyEnabled).to.equal(true);

    expect(await cmd('integrator:disable', '--integrator', id)).to.equal(0);
    expect((await repo.findKey(keyId))!.integratorActive).to.equal(false);
    expect(await cmd('integrator:enable', '--integrator', id)).to.equal(0);
    expect((await repo.findKey(keyId))!.integratorActive).to.equal(true);

    await cmd('integrator:list');
    expect(lines).to.include(`${id}\tactive\tkeys=1\tSwitches`);
    await cmd('integrator:keys', '--integrator', id);
    expect(lines).to.deep.equal([`${keyId}\tenabled\tfee_rate=1.00%\t`]);

    expect(await cmd('integrator:key:delete', '--key', keyId)).to.equal(0);
    expect(await repo.findKey(keyId)).to.equal(undefined);
    expect(await cmd('integrator:key:delete', '--key', keyId)).to.equal(1);
    expect(lines).to.deep.equal(['no such key']);

    await cmd('integrator:key:create', '--integrator', id, '--fee-rate', '10.00', '--quiet');
    const second = parseApiKey(lines[0])!.keyId;
    expect(await cmd('integrator:delete', '--integrator', id)).to.equal(0);
    expect(await repo.findKey(second), 'keys of a deleted integrator stop working').to.equal(undefined);
    expect(await cmd('integrator:enable', '--integrator', id)).to.equal(1);
    expect(await cmd('integrator:key:create', '--integrator', id, '--fee-rate', '1')).to.equal(1);
    expect(lines).to.deep.equal([`no integrator ${id}`]);
  });

  it('allows at most 20 keys per integrator, also when keys are added concurrently', async () => {
    await cmd('integrator:create', '--name', 'Many keys', '--quiet');
    const id = lines[0];
    const outs: string[] = [];
    const codes = await Promise.all(
      Array.from({ length: MAX_KEYS_PER_INTEGRATOR + 5 }, () => runIntegratorCommand(['integrator:key:create', '--integrator', id, '--fee-rate', '0.01', '--quiet'], repo, { out: (l) => outs.push(l) })),
    );
    expect(codes.filter((c) => c === 0)).to.have.length(MAX_KEYS_PER_INTEGRATOR);
    expect(codes.filter((c) => c === 1)).to.have.length(5);
    const [{ n }] = await db('agg.integrator_keys').where({ integrator_id: id }).whereNull('deleted_at').count<{ n: string }[]>({ n: '*' });
    expect(Number(n)).to.equal(MAX_KEYS_PER_INTEGRATOR);
    // a deleted key frees its slot
    const keys = await repo.listKeys(id);
    await cmd('integrator:key:delete', '--key', keys[0].key_id);
    expect(await cmd('integrator:key:create', '--integrator', id, '--fee-rate', '0.01', '--quiet')).to.equal(0);
  });

  it('shows the commission balance from the ledger by state and token', async () => {
    await cmd('integrator:create', '--name', 'Balance', '--quiet');
    const id = lines[0];
    const orders = new OrderRepository(db);
    for (const [amount, price] of [['250000000000000', '2000'], ['500000000000000', '3000']] as const) {
      const o = await orders.insert(orderFixture({ integrator_id: id, state: 'Completed', fee_integrator: amount, src_price_usd: price }));
      await orders.transition(o, 'Settled', {}, { event: 'settle' }, { integratorId: id, tokenId: 101, tokenDecimals: 18, amount: BigInt(amount), priceUsd: price });
    }
    expect(await cmd('integrator:balance', '--integrator', id)).to.equal(0);
    // 0.00025 ETH at 2000 + 0.0005 ETH at 3000 = 0.5 + 1.5 USD
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^Available\ttoken=101\tamount=750000000000000\tusd=2(\.0+)?\tlines=2$/);
  });

  it('withdraws commission: Available lines become WithdrawRequested under one withdrawal naming its operator, then Withdrawn with the payout reference; a later line stays Available', async () => {
    await cmd('integrator:create', '--name', 'Withdrawals', '--quiet');
    const id = lines[0];
    const orders = new OrderRepository(db);
    const settle = async (amount: string, price: string, tokenId = 101) => {
      const o = await orders.insert(orderFixture({ integrator_id: id, state: 'Completed', fee_integrator: amount, src_price_usd: price }));
      await orders.transition(o, 'Settled', {}, { event: 'settle' }, { integratorId: id, tokenId, tokenDecimals: 18, amount: BigInt(amount), priceUsd: price });
      return o;
    };
    await settle('250000000000000', '2000');
    await settle('500000000000000', '3000');
    expect(await cmd('integrator:withdrawals', '--integrator', id)).to.equal(0);
    expect(lines).to.deep.equal([]);

    expect(await cmd('integrator:withdraw', '--integrator', id, '--operator', 'dana')).to.equal(0);
    const withdrawal = /^withdrawal (\d+): WithdrawRequested$/.exec(lines[0])![1];
    expect(lines[1]).to.match(/^token=101\tamount=750000000000000\tusd=2(\.0+)?\tlines=2$/);
    expect(await cmd('integrator:balance', '--integrator', id)).to.equal(0);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^WithdrawRequested\ttoken=101\tamount=750000000000000/);
    expect(await cmd('integrator:withdraw', '--integrator', id), 'nothing left Available').to.equal(1);

    // a commission settled after the request is not part of it
    await settle('100000000000000', '2000');
    expect(await cmd('integrator:withdrawn', '--withdrawal', withdrawal, '--reference', '0x' + 'ab'.repeat(32), '--operator', 'erin')).to.equal(0);
    expect(lines[0]).to.equal(`withdrawal ${withdrawal}: Withdrawn (0x${'ab'.repeat(32)})`);
    expect(await cmd('integrator:withdrawn', '--withdrawal', withdrawal, '--reference', 'again'), 'once').to.equal(1);
    expect(lines[0]).to.equal(`withdrawal ${withdrawal} is Withdrawn, not WithdrawRequested`);
    expect(await cmd('integrator:balance', '--integrator', id)).to.equal(0);
    expect(lines.map((l) => l.split('\t').slice(0, 3).join(' '))).to.deep.equal(['Available token=101 amount=100000000000000', 'Withdrawn token=101 amount=750000000000000']);
    // the audit: who requested, who paid, the reference
    expect(await cmd('integrator:withdrawals', '--integrator', id)).to.equal(0);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(new RegExp(`^${withdrawal}\tWithdrawn\trequested by dana at \\S+\tpaid by erin at \\S+\t0x${'ab'.repeat(32)}$`));
    const stored = await db('agg.commission_withdrawals').where({ id: withdrawal }).first();
    expect(stored).to.include({ integrator_id: id, state: 'Withdrawn', requested_by: 'dana', paid_by: 'erin', reference: '0x' + 'ab'.repeat(32) });
  });

  it('refuses fee rates outside 0.01 %–10.00 %, bad ids and unknown commands', async () => {
    await cmd('integrator:create', '--name', 'Rates', '--quiet');
    const id = lines[0];
    for (const rate of ['0', '0.001', '10.01', '11', '1.5.0', 'abc']) {
      let err: unknown;
      await cmd('integrator:key:create', '--integrator', id, '--fee-rate', rate).catch((e) => (err = e));
      expect(err, rate).to.be.instanceOf(UsageError);
    }
    for (const argv of [['integrator:bogus'], ['integrator:create'], ['integrator:key:create', '--integrator', 'x1', '--fee-rate', '1'], ['integrator:key:create', '--integrator', id]]) {
      let err: unknown;
      await cmd(...argv).catch((e) => (err = e));
      expect(err, argv.join(' ')).to.be.instanceOf(UsageError);
    }
    const [{ n }] = await db('agg.integrator_keys').where({ integrator_id: id }).count<{ n: string }[]>({ n: '*' });
    expect(Number(n)).to.equal(0);
  });
});
