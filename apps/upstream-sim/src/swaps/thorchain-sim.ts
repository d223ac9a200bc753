import { randomBytes } from 'node:crypto';
import { bech32 } from '@scure/base';
import { decodeEventLog, decodeFunctionData, encodeAbiParameters, encodeEventTopics, hexToString, parseAbi, type Hex } from 'viem';
import { opReturnText } from '../chain-nodes/bitcoin-ledger';
import type { CallEffect, SimContract } from '../chain-nodes/evm-contracts';
import { transferLog } from '../chain-nodes/evm-contracts';
import type { QuotesSource } from '../market/quotes-source';

export const INBOUND_CHAINS = ['BTC', 'ETH', 'BSC', 'AVAX', 'GAIA', 'ARB', 'BASE'] as const;
export const EVM_CHAINS: ReadonlySet<string> = new Set(['ETH', 'BSC', 'AVAX', 'ARB', 'BASE']);
export const LIQUIDITY_FEE_BPS = 35n;
const THOR_DECIMALS = 8;
/** The simulator's EVM networks THORChain watches, and their native asset. */
const WATCHED: Readonly<Record<string, { chain: string; native: string }>> = {
  'ethereum-mainnet': { chain: 'ETH', native: 'ETH.ETH' },
  'bsc-mainnet': { chain: 'BSC', native: 'BSC.BNB' },
  'arbitrum-mainnet': { chain: 'ARB', native: 'ARB.ETH' },
  'base-mainnet': { chain: 'BASE', native: 'BASE.ETH' },
};
/** The simulator's Bitcoin network THORChain watches (its vault is a mainnet P2WPKH address). */
const BITCOIN_NETWORK = 'bitcoin-mainnet';
const CMC_IDS: Readonly<Record<string, string>> = { 'ETH.ETH': '1027', 'BTC.BTC': '1', 'BSC.BNB': '1839', 'AVAX.AVAX': '5805', 'GAIA.ATOM': '3794', 'ARB.ETH': '1027', 'BASE.ETH': '1027' };
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** THORChain's router (v4): the deposit of EVM sources, tokens through an allowance. */
export const ROUTER_ABI = parseAbi([
  'function depositWithExpiry(address vault, address asset, uint256 amount, string memo, uint256 expiration) payable',
  'event Deposit(address indexed to, address indexed asset, uint256 amount, string memo)',
]);

function cmcId(asset: string): string | undefined {
  const known = CMC_IDS[asset.toUpperCase()];
  if (known) return known;
  const symbol = asset.toUpperCase().split('.')[1]?.split('-')[0];
  return symbol === 'USDT' ? '825' : symbol === 'USDC' ? '3408' : undefined;
}

/** Decimals of an EVM asset on its chain: Ethereum's USDT and USDC have 6, everything else there 18. */
function evmDecimals(asset: string): number {
  const [chain, rest] = asset.toUpperCase().split('.');
  const symbol = rest?.split('-')[0];
  return chain === 'ETH' && (symbol === 'USDT' || symbol === 'USDC') ? 6 : 18;
}

function toThorUnits(amount: bigint, decimals: number): bigint {
  return decimals >= THOR_DECIMALS ? amount / 10n ** BigInt(decimals - THOR_DECIMALS) : amount * 10n ** BigInt(THOR_DECIMALS - decimals);
}

function newVault(chain: string): string {
  if (chain === 'BTC') return bech32.encode('bc', [0, ...bech32.toWords(randomBytes(20))]);
  if (chain === 'GAIA') return bech32.encode('cosmos', bech32.toWords(randomBytes(20)));
  return '0x' + randomBytes(20).toString('hex');
}

/** Each chain's gas asset, in which its outbound fee is charged. */
const GAS_ASSETS: Readonly<Record<string, string>> = { BTC: 'BTC.BTC', ETH: 'ETH.ETH', BSC: 'BSC.BNB', AVAX: 'AVAX.AVAX', GAIA: 'GAIA.ATOM', ARB: 'ARB.ETH', BASE: 'BASE.ETH' };
/** THORNode's `inbound_addresses` values at start: `gas_rate` (gwei on EVM chains, sat/vB on Bitcoin, uatom on Gaia) and `outbound_tx_size`. */
const START_GAS_RATES: Readonly<Record<string, number>> = { BTC: 10, ETH: 3, BSC: 3, AVAX: 25, GAIA: 10, ARB: 1, BASE: 1 };
const OUTBOUND_TX_SIZES: Readonly<Record<string, number>> = { BTC: 1000, ETH: 100_000, BSC: 100_000, AVAX: 100_000, GAIA: 1000, ARB: 100_000, BASE: 100_000 };
/** THORChain charges outbounds 1.5 times their gas (the outbound fee multiplier at its floor, 15 000 bp). */
const OUTBOUND_FEE_MULTIPLIER_BPS = 15_000n;
/** THORNode's recommended minimum inbound: four times the larger of the inbound chain's and the outbound chain's outbound fee. */
const MIN_IN_FEE_MULTIPLE = 4n;

/** The outbound fee of a chain in 1e8 units of its gas asset: gas rate × outbound size × the multiplier (EVM gas rates are gwei: 1 gwei × gas = 0.1 of a 1e8 unit). */
export function outboundFeeOf(chain: string, gasRate: number): bigint {
  const gas = BigInt(Math.ceil(gasRate * (OUTBOUND_TX_SIZES[chain] ?? 1000)));
  const fee = (gas * OUTBOUND_FEE_MULTIPLIER_BPS) / 10_000n;
  return EVM_CHAINS.has(chain) ? fee / 10n : fee;
}

export type SwapOutcome = 'done' | 'refunded';

/** An inbound THORChain saw on a chain: what it does with it, and when its outbound is out. */
export interface ObservedSwap {
  outcome: SwapOutcome;
  outHash: string;
  finishAt: number;
  memo: string;
  asset: string;
  amount: string;
  reason?: string;
}

/**
 * The state of the simulated THORChain: one vault (and router, on EVM chains) per chain and run,
 * halts, and the inbounds it observed on the simulator's chains. Like the real network it
 * watches its vaults and routers: a native transfer to the vault with a memo as calldata, a
 * router `Deposit`, or a Bitcoin transaction paying the BTC vault with the memo in an OP_RETURN
 * output, is an inbound; a valid swap memo whose output reaches its limit is swapped
 * (`OUT:`), anything else (no or a bad memo, an unknown asset, output under the limit, an expired
 * router deposit) is refunded (`REFUND:`), `swapMs` after the block.
 */
export class ThorchainSim {
  private readonly vaults = new Map<string, string>();
  /** Vaults churned out, by chain: a deposit to one is refunded. */
  private readonly retired = new Map<string, Set<string>>();
  private readonly gasRates = new Map<string, number>(Object.entries(START_GAS_RATES));
  private readonly routers = new Map<string, string>();
  readonly halted = new Set<string>();
  /** Outcomes set by hand (`PUT /sim/thorchain/tx/{hash}`), for inbounds of chains nothing watches. */
  readonly manual = new Map<string, { outcome: SwapOutcome; outHash: string }>();
  private readonly observed = new Map<string, ObservedSwap>();
  /** Token assets by `CHAIN:contract`, as quotes named them (THORChain knows its pools). */
  private readonly tokenAssets = new Map<string, string>();

  constructor(private readonly deps: { quotes: QuotesSource; now: () => number; swapMs: number }) {}

  vaultOf(chain: string): string {
    if (!this.vaults.has(chain)) this.vaults.set(chain, newVault(chain));
    return this.vaults.get(chain)!;
  }

  /** Whether `address` was a vault of `chain` before a churn. */
  isRetiredVault(chain: string, address: string): boolean {
    return this.retired.get(chain)?.has(address.toLowerCase()) ?? false;
  }

  /**
   * A churn: the chains' vaults (all known ones, or `chains`) are retired and new ones take their
   * place, as THORChain's validator churn rotates its Asgard vaults; routers stay.
   */
  churn(chains: readonly string[] = [...this.vaults.keys()]): { chain: string; retired: string; address: string }[] {
    return chains.map((chain) => {
      const old = this.vaultOf(chain);
      const set = this.retired.get(chain) ?? new Set<string>();
      set.add(old.toLowerCase());
      this.retired.set(chain, set);
      this.vaults.set(chain, newVault(chain));
      return { chain, retired: old, address: this.vaults.get(chain)! };
    });
  }

  gasRateOf(chain: string): number {
    return this.gasRates.get(chain) ?? 1;
  }

  setGasRate(chain: string, rate: number): void {
    this.gasRates.set(chain, rate);
  }

  /**
   * Gas moves: every chain's rate by a factor between 0.8 and 1.25 (`random` in [0, 1)), then a
   * quarter of the way back to its start value (so a stack left running stays within four times
   * it), never under its start.
   */
  moveGas(random: () => number): void {
    for (const [chain, start] of Object.entries(START_GAS_RATES)) {
      const next = this.gasRateOf(chain) * 0.8 ** (1 - 2 * random()) * 0.75 + start * 0.25;
      this.gasRates.set(chain, Math.max(start, Math.round(next * 100) / 100));
    }
  }

  /** A chain's outbound fee now, in 1e8 units of its gas asset (`outbound_fee` of inbound_addresses). */
  outboundFee(chain: string): bigint {
    return outboundFeeOf(chain, this.gasRateOf(chain));
  }

  /** `amount` (1e8 units) of asset `from` valued in asset `to` at the current prices; undefined for an unknown asset. */
  private convert(from: string, to: string, amount: bigint): bigint | undefined {
    const pf = this.priceUsd(from);
    const pt = this.priceUsd(to);
    if (pf === undefined || pt === undefined) return undefined;
    return (amount * BigInt(Math.round((pf / pt) * 1e12))) / 1_000_000_000_000n;
  }

  /** The outbound fee of the destination asset's chain, charged in that asset (`fees.outbound` of a quote). */
  outboundFeeIn(asset: string): bigint | undefined {
    const chain = asset.toUpperCase().split('.')[0];
    const gasAsset = GAS_ASSETS[chain];
    return gasAsset ? this.convert(gasAsset, asset.toUpperCase(), this.outboundFee(chain)) : undefined;
  }

  /** `recommended_min_amount_in` (1e8 units of `from`): four times the larger of the two chains' outbound fees, valued in `from`; it moves with gas. */
  recommendedMinIn(from: string, to: string): bigint | undefined {
    const fees = [from, to].map((asset) => {
      const chain = asset.toUpperCase().split('.')[0];
      const gasAsset = GAS_ASSETS[chain];
      return gasAsset ? this.convert(gasAsset, from.toUpperCase(), this.outboundFee(chain)) : undefined;
    });
    if (fees.some((f) => f === undefined)) return undefined;
    const [a, b] = fees as bigint[];
    return (a > b ? a : b) * MIN_IN_FEE_MULTIPLE;
  }

  routerOf(chain: string): string | undefined {
    if (!EVM_CHAINS.has(chain)) return undefined;
    if (!this.routers.has(chain)) this.routers.set(chain, '0x' + randomBytes(20).toString('hex'));
    return this.routers.get(chain);
  }

  priceUsd(asset: string): number | undefined {
    const id = cmcId(asset);
    return id ? (this.deps.quotes.quote(id) as { quote: { USD: { price: number } } }).quote.USD.price : undefined;
  }

  /** A quote's source asset is a pool THORChain knows: its token contract is remembered. */
  notePool(asset: string): void {
    const [chain, rest] = asset.toUpperCase().split('.');
    const contract = rest?.split('-')[1];
    if (contract) this.tokenAssets.set(`${chain}:${contract.toLowerCase()}`, asset.toUpperCase());
  }

  /** The swap's output in 1e8 units at the current prices, less the liquidity fee and the outbound fee (never below 0); undefined for an unknown asset. */
  swapOut(from: string, to: string, amount: bigint): { out: bigint; liquidity: bigint; outbound: bigint } | undefined {
    // the price ratio in 1e-12 keeps it integer
    const gross = this.convert(from, to, amount);
    const outbound = this.outboundFeeIn(to);
    if (gross === undefined || outbound === undefined) return undefined;
    const liquidity = (gross * LIQUIDITY_FEE_BPS) / 10_000n;
    const out = gross - liquidity - outbound;
    return { out: out > 0n ? out : 0n, liquidity, outbound };
  }

  /** The router contract of a watched EVM network, as the simulated chain runs it. */
  routerContract(network: string): { address: string; contract: SimContract } | undefined {
    const watched = WATCHED[network];
    const address = watched && this.routerOf(watched.chain);
    if (!address) return undefined;
    const contract: SimContract = (call, tokens): CallEffect => {
      let args: readonly [Hex, Hex, bigint, string, bigint];
      try {
        const decoded = decodeFunctionData({ abi: ROUTER_ABI, data: call.input });
        args = decoded.args as typeof args;
      } catch {
        return { reverted: 'execution reverted' };
      }
      const [vault, asset, amount, memo, expiration] = args;
      if (expiration < BigInt(call.timestampSec)) return { reverted: 'THORChain_Router: expired' };
      const deposit = (value: bigint) => ({
        address,
        topics: encodeEventTopics({ abi: ROUTER_ABI, eventName: 'Deposit', args: { to: vault, asset } }) as Hex[],
        data: encodeAbiParameters([{ type: 'uint256' }, { type: 'string' }], [value, memo]),
      });
      if (asset.toLowerCase() === ZERO_ADDRESS) return { logs: [deposit(call.value)], valueTo: vault.toLowerCase() };
      if (call.value !== 0n) return { reverted: 'unexpected eth' };
      const token = asset.toLowerCase();
      const allowed = tokens.allowance(token, call.from, address);
      if (allowed < amount) return { reverted: 'ERC20: insufficient allowance' };
      if (!tokens.move(token, call.from, address, amount)) return { reverted: 'ERC20: transfer amount exceeds balance' };
      tokens.setAllowance(token, call.from, address, allowed - amount);
      return { logs: [transferLog(token, call.from, address, amount), deposit(amount)], valueTo: address };
    };
    return { address, contract };
  }

  /** A mined block of a simulated network: the inbounds to the vault (and through the router, on EVM chains). */
  observeBlock(network: string, block: Record<string, unknown>, receipts: readonly Record<string, unknown>[]): void {
    if (network === BITCOIN_NETWORK) return this.observeBitcoinBlock(block);
    const watched = WATCHED[network];
    if (!watched) return;
    const vault = this.vaultOf(watched.chain).toLowerCase();
    const router = this.routerOf(watched.chain)?.toLowerCase();
    const txs = Array.isArray(block.transactions) ? (block.transactions as Record<string, unknown>[]) : [];
    txs.forEach((tx, i) => {
      const receipt = receipts[i];
      if (receipt?.status !== '0x1') return;
      const hash = String(tx.hash);
      const value = BigInt(String(tx.value ?? '0x0'));
      const to = String(tx.to ?? '').toLowerCase();
      if (to === vault && value > 0n) {
        this.inbound(hash, watched.native, value, 18, memoOf(String(tx.input ?? '0x')));
        return;
      }
      // a vault churned out: THORChain still watches it and refunds what arrives there
      if (value > 0n && this.isRetiredVault(watched.chain, to)) return this.refund(hash, watched.native, value, memoOf(String(tx.input ?? '0x')), 'vault retired');
      for (const log of (receipt.logs as { address: string; topics: Hex[]; data: Hex }[]) ?? []) {
        if (!router || log.address.toLowerCase() !== router) continue;
        let event: { to: Hex; asset: Hex; amount: bigint; memo: string };
        try {
          event = decodeEventLog({ abi: ROUTER_ABI, topics: log.topics as [Hex, ...Hex[]], data: log.data }).args as typeof event;
        } catch {
          continue;
        }
        const native = event.asset.toLowerCase() === ZERO_ADDRESS;
        const asset = native ? watched.native : this.tokenAssets.get(`${watched.chain}:${event.asset.toLowerCase()}`);
        // a router deposit to a churned-out vault is refunded; one to a foreign vault is not THORChain's
        if (event.to.toLowerCase() !== vault) {
          if (this.isRetiredVault(watched.chain, event.to)) this.refund(hash, asset ?? `${watched.chain}.UNKNOWN`, event.amount, event.memo, 'vault retired');
          continue;
        }
        if (!asset) this.refund(hash, `${watched.chain}.UNKNOWN-${event.asset.toUpperCase()}`, event.amount, event.memo, 'unknown asset');
        else this.inbound(hash, asset, event.amount, native ? 18 : evmDecimals(asset), event.memo);
      }
    });
  }

  /**
   * A mined Bitcoin block (Core's `getblock … 2` form): a transaction paying the BTC vault is an
   * inbound of what its outputs pay the vault; its memo is the text of its OP_RETURN output, as
   * THORChain's Bitcoin observer reads it (none: refunded).
   */
  private observeBitcoinBlock(block: Record<string, unknown>): void {
    const vault = this.vaultOf('BTC');
    type Out = { value: number; scriptPubKey: { hex: string; address?: string } };
    for (const tx of (Array.isArray(block.tx) ? block.tx : []) as { txid: string; vout: Out[] }[]) {
      const toVault = tx.vout.filter((o) => o.scriptPubKey.address === vault);
      const toRetired = tx.vout.filter((o) => o.scriptPubKey.address !== undefined && this.isRetiredVault('BTC', o.scriptPubKey.address));
      if (toVault.length === 0 && toRetired.length === 0) continue;
      const amount = (toVault.length ? toVault : toRetired).reduce((sum, o) => sum + BigInt(Math.round(o.value * 1e8)), 0n);
      const memo = tx.vout.map((o) => opReturnText(Buffer.from(o.scriptPubKey.hex, 'hex'))).find((m) => m !== undefined) ?? '';
      if (toVault.length === 0) this.refund(tx.txid, 'BTC.BTC', amount, memo, 'vault retired');
      else this.inbound(tx.txid, 'BTC.BTC', amount, THOR_DECIMALS, memo);
    }
  }

  private inbound(hash: string, asset: string, amount: bigint, decimals: number, memo: string): void {
    // an inbound mined again after a reorg is the same inbound: THORChain observes a transaction once
    if (this.observed.has(key(hash))) return;
    // `=:ASSET:DEST:LIMIT` (also `SWAP:`, `s:`), the limit optionally with streaming parts `/interval/quantity`
    const [fn, target, destination, limitPart] = memo.split(':');
    if (!['=', 's', 'swap'].includes((fn ?? '').toLowerCase()) || !target || !destination) return this.refund(hash, asset, amount, memo, 'memo is not a swap');
    const out = this.swapOut(asset, target, toThorUnits(amount, decimals));
    if (!out) return this.refund(hash, asset, amount, memo, `unknown asset ${target}`);
    const limitText = (limitPart ?? '').split('/')[0];
    const limit = /^[0-9]+$/.test(limitText) ? BigInt(limitText) : 0n;
    if (out.out === 0n) return this.refund(hash, asset, amount, memo, 'not enough asset to pay for fees');
    if (out.out < limit) return this.refund(hash, asset, amount, memo, `emit asset ${out.out} less than price limit ${limit}`);
    this.observed.set(key(hash), { outcome: 'done', outHash: randomBytes(32).toString('hex').toUpperCase(), finishAt: this.deps.now() + this.deps.swapMs, memo, asset, amount: amount.toString() });
  }

  private refund(hash: string, asset: string, amount: bigint, memo: string, reason: string): void {
    if (this.observed.has(key(hash))) return;
    this.observed.set(key(hash), { outcome: 'refunded', outHash: randomBytes(32).toString('hex').toUpperCase(), finishAt: this.deps.now() + this.deps.swapMs, memo, asset, amount: amount.toString(), reason });
  }

  /** What THORChain knows of an inbound: observed (finished once its time came), set by hand, or nothing. */
  statusOf(hash: string): { observed: boolean; done?: { outcome: SwapOutcome; outHash: string } } {
    const seen = this.observed.get(key(hash));
    if (seen) return { observed: true, ...(this.deps.now() >= seen.finishAt ? { done: { outcome: seen.outcome, outHash: seen.outHash } } : {}) };
    const manual = this.manual.get(key(hash));
    return { observed: false, ...(manual ? { done: manual } : {}) };
  }

  observedSwaps(): (ObservedSwap & { hash: string })[] {
    return [...this.observed].map(([hash, s]) => ({ hash, ...s }));
  }
}

const key = (hash: string) => hash.replace(/^0x/i, '').toUpperCase();

function memoOf(input: string): string {
  if (input === '0x' || !/^0x([0-9a-fA-F]{2})+$/.test(input)) return '';
  try {
    return hexToString(input as Hex);
  } catch {
    return '';
  }
}
