import { parseArgs } from 'node:util';
import { CHAINS, canonicalAddress, type ChainType } from '@chainpipe/chains';
import { gasTopUp, solanaSweepFit, transferCalldata, type FeePlan, type GasStation, type OutgoingTransfers } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository } from '@chainpipe/order-store';
import { decideSweep } from '@chainpipe/orders';
import { str, type Field } from '@chainpipe/runtime';
import { UsageError, type Output } from './commands';
import { operatorOf } from './operator';

export const TREASURY_USAGE = `  treasury:sweep [--dry-run] [--limit N] [--order ORDER_NO] [--operator NAME]
      move fee_platform + fee_integrator left at the deposit addresses of Completed and Settled
      orders to the treasury of their chain's family (TREASURY_ADDRESS_EVM, TREASURY_ADDRESS_UTXO,
      TREASURY_ADDRESS_TVM, TREASURY_ADDRESS_SVM), once per order, leaving the network fee of the
      transfer (on Solana also the rent-exempt minimum, unless the account ends empty);
      prints each transfer's hash (--dry-run: what it would move, nothing signed; --order: that
      order only). A token's fees leave by the token's transfer, its gas sent to the deposit
      address by the gas station first: such an order shows its top-up; run again once it is
      confirmed. Needs the
      signer (SIGNER_URL + SIGNER_TOKEN, or DEV_SIGNER_MNEMONIC in development) and the chain
      origins (CHAIN_RPC_URLS / CHAIN_RPC_DEFAULT_BASE)
`;

/** The treasuries where swept fees go, per chain family: EVM required, Bitcoin, Tron and Solana optional; checked at start. */
export const treasuryConfig = {
  TREASURY_ADDRESS_EVM: treasuryAddress('evm', { required: true, doc: 'the platform treasury on the EVM chains: fee sweeps (treasury:sweep) send the fees of completed orders there' }),
  TREASURY_ADDRESS_UTXO: treasuryAddress('utxo', { required: false, doc: 'the platform treasury on Bitcoin (a mainnet address: 1…, 3…, bc1…): fee sweeps of Bitcoin deposit addresses go there; empty: they are skipped' }),
  TREASURY_ADDRESS_TVM: treasuryAddress('tvm', { required: false, doc: 'the platform treasury on Tron (T…): fee sweeps of Tron deposit addresses go there; empty: they are skipped' }),
  TREASURY_ADDRESS_SVM: treasuryAddress('svm', { required: false, doc: 'the platform treasury on Solana (a base58 address of 32 bytes): fee sweeps of SOL deposit addresses go there; empty: they are skipped' }),
};

const FAMILY_NAMES = { evm: 'an EVM address', utxo: 'a Bitcoin mainnet address', tvm: 'a Tron address', svm: 'a Solana address' } as const;

/** A treasury address of one chain family in its canonical form; optional ones are '' when unset. */
function treasuryAddress(family: keyof typeof FAMILY_NAMES, opts: { required: boolean; doc: string }): Field<string> {
  const base = str({ ...(opts.required ? {} : { default: '' }), doc: opts.doc });
  return {
    ...base,
    kind: ({ evm: 'evm-address', utxo: 'bitcoin-address', tvm: 'tron-address', svm: 'solana-address' } as const)[family],
    parse(raw) {
      if (raw === undefined || raw.trim() === '') return opts.required ? { error: 'is required' } : { value: '' };
      // a 0x address is an EVM one: as Tron's treasury it would be a paste from the wrong chain
      const checked = family === 'tvm' && /^0x/i.test(raw.trim()) ? { ok: false as const } : canonicalAddress(family, raw.trim());
      return checked.ok ? { value: checked.address } : { error: `is not ${FAMILY_NAMES[family]}: ${raw}` };
    },
  };
}

/** What a sweep needs of a chain besides the outgoing transfer (`EvmSender`, `BitcoinSender`, `TronSender` and `SolanaSender` have both). */
export interface SweepChain {
  balanceOf(address: string): Promise<bigint>;
  /** What `holder` holds of a token contract; absent on chains without tokens (Bitcoin). */
  tokenBalanceOf?(token: string, holder: string): Promise<bigint>;
  feePlan(from: string, to: string, data?: `0x${string}`): Promise<FeePlan>;
}

export interface TreasuryDeps {
  db: Knex;
  transfers: Pick<OutgoingTransfers, 'send' | 'broadcast' | 'follow'>;
  chains(chainType: string): SweepChain | undefined;
  /** Canonical EVM treasury address. */
  treasuryEvm: string;
  /** Tops up a token's deposit address with the sweep's gas (on the chains it serves); absent: token fees are skipped. */
  gas?: Pick<GasStation, 'ensure' | 'serves'>;
  /** Canonical Bitcoin treasury address; unset: Bitcoin deposit addresses are not swept. */
  treasuryUtxo?: string;
  /** Canonical Tron treasury address; unset: Tron deposit addresses are not swept. */
  treasuryTvm?: string;
  /** Canonical Solana treasury address; unset: Solana deposit addresses are not swept. */
  treasurySvm?: string;
}

/** The treasury of a chain type's family; undefined where none is configured. */
function treasuryOf(deps: TreasuryDeps, chainType: string): string | undefined {
  const family = CHAINS[chainType as ChainType]?.family;
  if (family === 'evm') return deps.treasuryEvm;
  if (family === 'utxo') return deps.treasuryUtxo || undefined;
  if (family === 'tvm') return deps.treasuryTvm || undefined;
  if (family === 'svm') return deps.treasurySvm || undefined;
  return undefined;
}

/**
 * `treasury:sweep`: the fees of orders whose swap succeeded (`decideSweep` of
 * `@chainpipe/orders`), each sent as the order's outgoing transfer of kind `sweep` (one per order,
 * stored signed before its broadcast, so a second run never sends it again: it shows the stored
 * one and broadcasts it again while it is not mined). A failed swap's deposit is never swept: it
 * is refunded in full. A token's fees go by `transfer(treasury, fees)`, whose gas the gas station
 * sends the deposit address first (`gas_topup_sweep`): a run that sent or waits for the top-up
 * shows it, and the sweep goes on a run after it is confirmed.
 */
export async function runTreasuryCommand(argv: string[], deps: TreasuryDeps, io: Output): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'treasury:sweep') throw new UsageError(`unknown command ${command}`);
  const { values } = parseArgs({ args: rest, options: { 'dry-run': { type: 'boolean', default: false }, limit: { type: 'string' }, order: { type: 'string' }, operator: { type: 'string' } }, strict: true });
  // who swept, on every sweep transfer it sends
  const operator = operatorOf(values.operator);
  const limit = values.limit === undefined ? 500 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw new UsageError('--limit must be 1 to 100000');
  const dryRun = values['dry-run'];
  const stored = new OutgoingTransferRepository(deps.db);
  const orders = await new OrderRepository(deps.db).listSweepable(limit, values.order?.trim());
  const totals = new Map<string, bigint>();
  let count = 0;
  let failures = 0;
  for (const o of orders) {
    try {
      const existing = await stored.find(o.id, 'sweep');
      if (existing) {
        const row = dryRun ? existing : await deps.transfers.follow(await deps.transfers.broadcast(existing));
        io.out(`${o.order_no}\talready sent\t${row.amount}\t${row.tx_hash}\t${row.status}`);
        continue;
      }
      const chain = deps.chains(o.deposit_chain_type);
      const token = o.is_native ? null : o.contract_address;
      const treasury = treasuryOf(deps, o.deposit_chain_type);
      // a token's fees leave only where the gas station pays their transfer (the EVM chains, Tron)
      if (!chain || (!o.is_native && (!token || !deps.gas?.serves(o.deposit_chain_type) || !chain.tokenBalanceOf))) {
        io.out(`${o.order_no}\tskipped\t${chain ? 'a token, and no gas station to pay its transfer' : 'not a chain the platform sends on'} (${o.deposit_chain_type}, token ${o.src_token_id})`);
        continue;
      }
      if (!treasury) {
        io.out(`${o.order_no}\tskipped\tno treasury is configured for ${o.deposit_chain_type}`);
        continue;
      }
      const facts = { state: o.state, feePlatform: BigInt(o.fee_platform), feeIntegrator: BigInt(o.fee_integrator) };
      if (token) {
        // the fees are the token's; the transfer's gas is the station's native coin, nothing of the token pays for it
        const held = await chain.tokenBalanceOf!(token, o.deposit_address);
        const decision = decideSweep({ ...facts, held, networkFee: 0n });
        if (decision.kind === 'skip') {
          io.out(`${o.order_no}\tskipped\t${decision.reason} (holds ${held} of ${token})`);
          continue;
        }
        const data = transferCalldata(treasury, decision.value);
        const plan = await chain.feePlan(o.deposit_address, token, data);
        if (dryRun) {
          const topUp = gasTopUp([plan], await chain.balanceOf(o.deposit_address));
          totals.set(o.deposit_chain_type, (totals.get(o.deposit_chain_type) ?? 0n) + decision.value);
          count += 1;
          io.out(`${o.order_no}\twould sweep\t${decision.value}\tof ${token} from ${o.deposit_address}\tto ${treasury}\t(fees ${decision.fees}; gas top-up ${topUp.kind === 'top_up' ? topUp.value : 0})`);
          continue;
        }
        const gas = await deps.gas!.ensure({ orderId: o.id, purpose: 'sweep', chainType: o.deposit_chain_type, address: o.deposit_address, plans: [plan] });
        if (gas.kind === 'waiting' || gas.kind === 'failed') {
          if (gas.kind === 'failed') failures += 1;
          io.out(`${o.order_no}\tgas top-up\t${gas.topUp.amount}\t${gas.topUp.tx_hash}\t${gas.topUp.status}${gas.kind === 'waiting' ? '\t(run again once it is confirmed)' : `\t${gas.topUp.error}`}`);
          continue;
        }
        const fees = gas.kind === 'ready' ? gas.plans[0] : plan;
        const row = await deps.transfers.send({
          orderId: o.id,
          kind: 'sweep',
          chainType: o.deposit_chain_type,
          from: { index: o.deposit_index!, address: o.deposit_address },
          call: { to: token, value: 0n, data, fees },
          asset: token,
          amount: decision.value,
          detail: { fees: decision.fees.toString(), fee_platform: o.fee_platform, fee_integrator: o.fee_integrator, held: held.toString(), network_fee: fees.maxNetworkFee.toString(), recipient: treasury, ...(gas.kind === 'ready' ? { gas_topup_tx_hash: gas.topUp.tx_hash } : {}), operator },
        });
        totals.set(o.deposit_chain_type, (totals.get(o.deposit_chain_type) ?? 0n) + decision.value);
        count += 1;
        io.out(`${o.order_no}\tswept\t${decision.value}\t${row.tx_hash}\t${row.status}`);
        continue;
      }
      const [plan, held] = await Promise.all([chain.feePlan(o.deposit_address, treasury), chain.balanceOf(o.deposit_address)]);
      const decided = decideSweep({ ...facts, held, networkFee: plan.maxNetworkFee });
      // Solana's rent rule: the deposit account ends empty or rent-exempt, an empty treasury account gets the minimum
      const decision = decided.kind === 'sweep' && CHAINS[o.deposit_chain_type as ChainType]?.family === 'svm'
        ? { ...decided, ...solanaSweepFit({ held, value: decided.value, fee: plan.maxNetworkFee, treasuryHeld: await chain.balanceOf(treasury) }) }
        : decided;
      if (decision.kind === 'skip') {
        io.out(`${o.order_no}\tskipped\t${decision.reason} (holds ${held}, network fee up to ${plan.maxNetworkFee})`);
        continue;
      }
      totals.set(o.deposit_chain_type, (totals.get(o.deposit_chain_type) ?? 0n) + decision.value);
      count += 1;
      if (dryRun) {
        io.out(`${o.order_no}\twould sweep\t${decision.value}\tfrom ${o.deposit_address}\tto ${treasury}\t(fees ${decision.fees}, network fee up to ${plan.maxNetworkFee})`);
        continue;
      }
      const row = await deps.transfers.send({
        orderId: o.id,
        kind: 'sweep',
        chainType: o.deposit_chain_type,
        from: { index: o.deposit_index!, address: o.deposit_address },
        call: { to: treasury, value: decision.value, fees: plan },
        asset: null,
        amount: decision.value,
        detail: { fees: decision.fees.toString(), fee_platform: o.fee_platform, fee_integrator: o.fee_integrator, held: held.toString(), network_fee: plan.maxNetworkFee.toString(), operator },
      });
      io.out(`${o.order_no}\tswept\t${decision.value}\t${row.tx_hash}\t${row.status}`);
    } catch (err) {
      failures += 1;
      io.out(`${o.order_no}\terror\t${(err as Error).message}`);
    }
  }
  const sums = [...totals].map(([chainType, sum]) => `${sum} on ${chainType}`).join(', ') || 'nothing';
  io.out(`${dryRun ? 'would sweep' : 'swept'} ${sums} (smallest units) from ${count} orders${failures ? `; ${failures} failed (run again)` : ''}`);
  return failures ? 1 : 0;
}
