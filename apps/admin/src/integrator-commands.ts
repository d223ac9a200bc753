import { parseArgs } from 'node:util';
import { generateApiKey } from '@chainpipe/http';
import { feeRateString, parseFeeRatePercent } from '@chainpipe/orders';
import { KeyLimitError, MAX_KEYS_PER_INTEGRATOR, NoSuchIntegratorError, type IntegratorRepository } from '@chainpipe/order-store';
import { UsageError, type Output } from './commands';
import { operatorOf } from './operator';

export const INTEGRATOR_USAGE = `  integrator:create --name NAME [--fee-rate PCT] [--label LABEL] [--quiet]
      create an integrator of the aggregator API; with --fee-rate also its first key (printed once)
  integrator:key:create --integrator ID --fee-rate PCT [--label LABEL] [--quiet]
      add a key with its commission rate in percent (0.01 to 10.00); at most ${MAX_KEYS_PER_INTEGRATOR} keys each
  integrator:key:disable --key KEY_ID | integrator:key:enable --key KEY_ID
  integrator:key:delete --key KEY_ID     the key stops working at once; orders keep their snapshots
  integrator:disable --integrator ID | integrator:enable --integrator ID
  integrator:delete --integrator ID      the integrator and all its keys stop working at once
  integrator:list                        integrators with their state and number of keys
  integrator:keys --integrator ID        the keys of an integrator (never the secrets)
  integrator:balance --integrator ID     commission ledger totals by state and source token (smallest unit, USD at creation prices)
  integrator:withdraw --integrator ID [--token TOKEN_ID] [--operator NAME]
      a withdrawal of the integrator's Available commission (of one source token): those ledger
      lines become WithdrawRequested under a new withdrawal id, printed with its totals
  integrator:withdrawn --withdrawal ID --reference REF [--operator NAME]
      the withdrawal paid out (REF: the payout's transaction hash or reference): its lines Withdrawn
  integrator:withdrawals --integrator ID  the integrator's withdrawals: state, who requested and who paid them, when, reference
      (who ran a withdrawal command is recorded on it: --operator, else CHAINPIPE_OPERATOR, else login@host)
`;

type Repo = Pick<
  IntegratorRepository,
  | 'createIntegrator' | 'setIntegratorActive' | 'deleteIntegrator' | 'addKey' | 'setKeyEnabled' | 'deleteKey' | 'listIntegrators' | 'listKeys' | 'balance'
  | 'requestWithdrawal' | 'completeWithdrawal' | 'withdrawals'
>;

/** `integrator:*` commands; returns the exit code. */
export async function runIntegratorCommand(argv: string[], repo: Repo, io: Output): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      integrator: { type: 'string' },
      key: { type: 'string' },
      label: { type: 'string' },
      'fee-rate': { type: 'string' },
      quiet: { type: 'boolean', default: false },
      token: { type: 'string' },
      withdrawal: { type: 'string' },
      reference: { type: 'string' },
      operator: { type: 'string' },
    },
    strict: true,
  });
  const need = (name: 'name' | 'integrator' | 'key' | 'fee-rate' | 'withdrawal' | 'reference'): string => {
    const v = values[name];
    if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required for ${command}`);
    return v.trim();
  };
  const integratorId = (): string => {
    const id = need('integrator');
    if (!/^\d{1,18}$/.test(id)) throw new UsageError('--integrator must be an integrator id (digits)');
    return id;
  };
  const feeRate = (): number => {
    const bp = parseFeeRatePercent(need('fee-rate'));
    if (bp === null) throw new UsageError('--fee-rate must be a percentage from 0.01 to 10.00 with at most two decimals');
    return bp;
  };
  const createKey = async (id: string, bp: number): Promise<number> => {
    const key = generateApiKey();
    try {
      await repo.addKey(id, { keyId: key.keyId, secretHash: key.secretHash, feeRateBp: bp, label: values.label ?? null });
    } catch (err) {
      if (err instanceof KeyLimitError || err instanceof NoSuchIntegratorError) {
        io.out(err.message);
        return 1;
      }
      throw err;
    }
    if (values.quiet) {
      io.out(key.token);
      return 0;
    }
    io.out(`integrator_id: ${id}`);
    io.out(`key_id:        ${key.keyId}`);
    io.out(`fee_rate:      ${feeRateString(bp)} %`);
    io.out(`api_key:       ${key.token}`);
    io.out('The key is shown only now; only its hash is stored.');
    return 0;
  };
  const done = (ok: boolean, yes: string, no: string): number => {
    io.out(ok ? yes : no);
    return ok ? 0 : 1;
  };

  switch (command) {
    case 'integrator:create': {
      const name = need('name');
      const bp = values['fee-rate'] !== undefined ? feeRate() : null;
      const id = await repo.createIntegrator(name);
      if (bp === null) {
        io.out(values.quiet ? id : `integrator_id: ${id}`);
        return 0;
      }
      return createKey(id, bp);
    }
    case 'integrator:key:create':
      return createKey(integratorId(), feeRate());
    case 'integrator:key:disable':
    case 'integrator:key:enable': {
      const enable = command === 'integrator:key:enable';
      return done(await repo.setKeyEnabled(need('key'), enable), enable ? 'enabled' : 'disabled', 'no such key');
    }
    case 'integrator:key:delete':
      return done(await repo.deleteKey(need('key')), 'deleted', 'no such key');
    case 'integrator:disable':
    case 'integrator:enable': {
      const enable = command === 'integrator:enable';
      return done(await repo.setIntegratorActive(integratorId(), enable), enable ? 'enabled' : 'disabled', 'no such integrator');
    }
    case 'integrator:delete':
      return done(await repo.deleteIntegrator(integratorId()), 'deleted', 'no such integrator');
    case 'integrator:list':
      for (const i of await repo.listIntegrators()) io.out(`${i.id}\t${i.is_active ? 'active' : 'disabled'}\tkeys=${i.keys}\t${i.name}`);
      return 0;
    case 'integrator:keys':
      for (const k of await repo.listKeys(integratorId())) {
        io.out(`${k.key_id}\t${k.is_enabled ? 'enabled' : 'disabled'}\tfee_rate=${feeRateString(k.fee_rate_bp)}%\t${k.label ?? ''}`);
      }
      return 0;
    case 'integrator:balance':
      for (const b of await repo.balance(integratorId())) io.out(`${b.state}\ttoken=${b.token_id}\tamount=${b.amount}\tusd=${b.amount_usd}\tlines=${b.lines}`);
      return 0;
    case 'integrator:withdraw': {
      const tokenId = values.token === undefined ? undefined : Number(values.token);
      if (tokenId !== undefined && !(Number.isInteger(tokenId) && tokenId > 0)) throw new UsageError('--token must be a token id');
      const w = await repo.requestWithdrawal(integratorId(), operatorOf(values.operator), tokenId);
      if (!w) {
        io.out('nothing Available to withdraw');
        return 1;
      }
      io.out(`withdrawal ${w.id}: WithdrawRequested`);
      for (const t of w.totals) io.out(`token=${t.token_id}\tamount=${t.amount}\tusd=${t.amount_usd}\tlines=${t.lines}`);
      return 0;
    }
    case 'integrator:withdrawn': {
      const withdrawal = need('withdrawal');
      if (!/^[1-9]\d{0,18}$/.test(withdrawal)) throw new UsageError('--withdrawal must be a withdrawal id');
      const reference = need('reference');
      const done = await repo.completeWithdrawal(withdrawal, operatorOf(values.operator), reference);
      if (done.kind === 'not_requested') {
        io.out(done.state === null ? 'no such withdrawal' : `withdrawal ${withdrawal} is ${done.state}, not WithdrawRequested`);
        return 1;
      }
      io.out(`withdrawal ${withdrawal}: Withdrawn (${reference})`);
      for (const t of done.totals) io.out(`token=${t.token_id}\tamount=${t.amount}\tusd=${t.amount_usd}\tlines=${t.lines}`);
      return 0;
    }
    case 'integrator:withdrawals':
      for (const w of await repo.withdrawals(integratorId())) {
        io.out(`${w.id}\t${w.state}\trequested by ${w.requested_by} at ${new Date(w.requested_at).toISOString()}${w.paid_at ? `\tpaid by ${w.paid_by} at ${new Date(w.paid_at).toISOString()}\t${w.reference}` : ''}`);
      }
      return 0;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}
