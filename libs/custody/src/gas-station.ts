import { CHAINS, type ChainOrigins, type ChainType } from '@chainpipe/chains';
import { gasTopUpKind, type GasTopUpPurpose, type OutgoingTransferRepository, type OutgoingTransferRow } from '@chainpipe/order-store';
import { GAS_STATION_INDEX } from './deposit-keys';
import type { DepositKeyRef } from './evm-transaction';
import { chainTypesWithOrigin } from './evm-senders';
import { gasTopUp, stationNonce } from './gas-topup';
import type { FeePlan, OutgoingTransferIntent, OutgoingTransfers, TransferChain } from './outgoing-transfers';
import type { Signer } from './signer';

/** What the station needs of a chain besides sending (`EvmSender` and `TronSender` have all of it). */
export interface StationChain extends TransferChain {
  balanceOf(address: string): Promise<bigint>;
  feePlan(from: string, to: string): Promise<FeePlan>;
  /** The account's next nonce; absent on a chain without account nonces (Tron). */
  nextNonce?(address: string): Promise<number>;
}

/** The chain families the station sends on: those whose tokens' transfers are paid in the native coin by the sending address. */
export const STATION_FAMILIES = ['evm', 'tvm'] as const;
export type StationFamily = (typeof STATION_FAMILIES)[number];

/** The station's key: `GAS_STATION_INDEX` and its address in each family it sends on, as the signer derives them. */
export interface StationKey {
  index: number;
  addresses: Readonly<Record<StationFamily, string>>;
}

/** The station's key as the signer derives it (the reserved index of each family's deposit account). */
export async function stationKeyOf(signer: Pick<Signer, 'addressAt'>): Promise<StationKey> {
  const [evm, tvm] = await Promise.all([signer.addressAt('evm', GAS_STATION_INDEX), signer.addressAt('tvm', GAS_STATION_INDEX)]);
  return { index: GAS_STATION_INDEX, addresses: { evm, tvm } };
}

/** The mainnet chain types of the station's families that have an origin: where its balance is read (gauge, `gas:station`). */
export function stationChainTypesWithOrigin(origins: ChainOrigins): string[] {
  return chainTypesWithOrigin(origins, STATION_FAMILIES);
}

function stationFamilyOf(chainType: string): StationFamily | undefined {
  const family = CHAINS[chainType as ChainType]?.family;
  return (STATION_FAMILIES as readonly string[]).includes(family) ? (family as StationFamily) : undefined;
}

/** A deposit address that must pay for transfers it sends (a token's forward, refund or sweep). */
export interface GasNeed {
  orderId: string;
  purpose: GasTopUpPurpose;
  chainType: string;
  address: string;
  /** The fee plans the deposit address's transfers will be signed with, in order. */
  plans: readonly FeePlan[];
}

export type GasState =
  /** The address holds enough for `plans`: sign with them. */
  | { kind: 'enough' }
  /** A top-up is sent and not yet confirmed: nothing else is signed this pass. */
  | { kind: 'waiting'; topUp: OutgoingTransferRow }
  /** The top-up is confirmed: sign with `plans`, the ones it was sized for. */
  | { kind: 'ready'; topUp: OutgoingTransferRow; plans: FeePlan[] }
  /** The top-up failed for good (reverted, its nonce taken): an operator looks. */
  | { kind: 'failed'; topUp: OutgoingTransferRow };

export interface GasStationDeps {
  /** The one way money leaves a platform address (stored signed before its broadcast). */
  transfers: Pick<OutgoingTransfers, 'prepare' | 'broadcast' | 'follow'>;
  store: Pick<OutgoingTransferRepository, 'find' | 'withSenderLock'>;
  chain(chainType: string): StationChain | undefined;
  /** The station's key: `GAS_STATION_INDEX` and its address in each family, as the signer derives them. */
  station: StationKey;
  /** Records the confirmed top-up on the order's events (once per hash). */
  recordTopUp(row: OutgoingTransferRow): Promise<void>;
}

/** A fee plan as stored in a top-up's details: every bigint as a decimal string. */
function planToJson(plan: FeePlan): Record<string, string> {
  return Object.fromEntries(Object.entries(plan).map(([k, v]) => [k, (v as bigint).toString()]));
}

function planFromJson(json: unknown): FeePlan {
  if (typeof json !== 'object' || json === null) throw new Error('a stored fee plan is not an object');
  const plan = Object.fromEntries(Object.entries(json).map(([k, v]) => [k, BigInt(v as string)])) as unknown as FeePlan;
  if (typeof plan.maxNetworkFee !== 'bigint') throw new Error('a stored fee plan has no maxNetworkFee');
  return plan;
}

/**
 * The gas station (docs/decisions.md, "gas for token deposit addresses"): a platform account
 * (the EVM and the Tron key of `GAS_STATION_INDEX`) that sends a deposit address exactly the
 * native coin its planned transfers need at their fee plans, less what it holds (`gasTopUp`). A
 * top-up is the order's outgoing transfer of kind `gas_topup_<purpose>` (one per order and
 * purpose, stored signed before its broadcast, broadcast again from the stored bytes). Many
 * orders send from the one station, from the executor and the admin command at once, so on a
 * chain with account nonces (EVM) its nonce is decided under a Postgres advisory lock of the
 * station's address, around the signature and the store: the node's pending count, or one past
 * the highest stored transaction not yet mined (`stationNonce`). A Tron transaction has no nonce
 * (it names a recent block and expires): top-ups sent at once never displace each other, and two
 * senders of one order's top-up are settled by the unique (order, kind) row, so no lock is taken
 * there. The fee plans the top-up was sized for are kept in its details: the deposit address's
 * transfers are signed with exactly those, so what was sent is what they cost at most.
 */
export class GasStation {
  constructor(private readonly deps: GasStationDeps) {}

  /** The station's address on a chain type; undefined where it does not send (not an EVM or Tron chain). */
  addressOn(chainType: string): string | undefined {
    const family = stationFamilyOf(chainType);
    return family ? this.deps.station.addresses[family] : undefined;
  }

  /** Its key on a chain type it sends on. */
  private keyOn(chainType: string): DepositKeyRef {
    const address = this.addressOn(chainType);
    if (!address) throw new Error(`the gas station does not send on ${chainType}`);
    return { index: this.deps.station.index, address };
  }

  /** Whether the station sends on this chain type: an EVM or Tron chain with a sender. */
  serves(chainType: string): boolean {
    return this.addressOn(chainType) !== undefined && this.deps.chain(chainType) !== undefined;
  }

  /** The station's balance on a chain (for the gauge, the admin command). */
  async balance(chainType: string): Promise<bigint> {
    const chain = this.deps.chain(chainType);
    if (!chain) throw new Error(`no sender is configured for ${chainType}`);
    return chain.balanceOf(this.keyOn(chainType).address);
  }

  /**
   * Where the deposit address's gas for `need` stands: enough already, a top-up on its way
   * (sent now when there was none), or a confirmed top-up and the fee plans it paid for.
   */
  async ensure(need: GasNeed): Promise<GasState> {
    const kind = gasTopUpKind(need.purpose);
    let row = await this.deps.store.find(need.orderId, kind);
    if (!row) {
      const chain = this.deps.chain(need.chainType);
      if (!chain) throw new Error(`no sender is configured for ${need.chainType}`);
      const decision = gasTopUp(need.plans, await chain.balanceOf(need.address));
      if (decision.kind === 'enough') return { kind: 'enough' };
      row = await this.prepare(chain, need, decision);
    }
    row = await this.deps.transfers.follow(await this.deps.transfers.broadcast(row));
    if (row.status === 'failed') return { kind: 'failed', topUp: row };
    if (row.status !== 'confirmed') return { kind: 'waiting', topUp: row };
    await this.deps.recordTopUp(row);
    const plans = row.detail.plans;
    if (!Array.isArray(plans)) throw new Error(`gas top-up ${row.tx_hash} keeps no fee plans`);
    return { kind: 'ready', topUp: row, plans: plans.map(planFromJson) };
  }

  /** Signs and stores the top-up (on a chain with nonces under the station's lock, its nonce decided there); not broadcast. */
  private async prepare(chain: StationChain, need: GasNeed, decision: { value: bigint; needed: bigint; held: bigint }): Promise<OutgoingTransferRow> {
    const station = this.keyOn(need.chainType);
    const fees = await chain.feePlan(station.address, need.address);
    const intent = (nonce?: number): OutgoingTransferIntent => ({
      orderId: need.orderId,
      kind: gasTopUpKind(need.purpose),
      chainType: need.chainType,
      from: station,
      call: { to: need.address, value: decision.value, fees, ...(nonce === undefined ? {} : { nonce }) },
      asset: null,
      amount: decision.value,
      detail: { purpose: need.purpose, needed: decision.needed.toString(), held: decision.held.toString(), plans: need.plans.map(planToJson) },
    });
    const { nextNonce } = chain;
    // no account nonce (Tron): nothing to decide under a lock
    if (!nextNonce) return this.deps.transfers.prepare(intent());
    return this.deps.store.withSenderLock(need.chainType, station.address, async (locked) => {
      const nonce = stationNonce(await nextNonce.call(chain, station.address), await locked.highestOpenNonce(need.chainType, station.address));
      return this.deps.transfers.prepare(intent(nonce), locked);
    });
  }
}
