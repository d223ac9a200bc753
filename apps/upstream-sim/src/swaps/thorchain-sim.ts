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

  /** The swap's output in 1e8 units at the current prices, less the liquidity fee; undefined for an unknown asset. */
  swapOut(from: string, to: string, amount: bigint): { out: bigint; liquidity: bigint } | undefined {
    const pf = this.priceUsd(from);
    const pt = this.priceUsd(to);
    if (pf === undefined || pt === undefined) return undefined;
    // the price ratio in 1e-12 keeps it integer
    const ratio = BigInt(Math.round((pf / pt) * 1e12));
    const gross = (amount * ratio) / 1_000_000_000_000n;
    const liquidity = (gross * LIQUIDITY_FEE_BPS) / 10_000n;
    return { out: gross - liquidity, liquidity };
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
      if (String(tx.to ?? '').toLowerCase() === vault && value > 0n) {
        this.inbound(hash, watched.native, value, 18, memoOf(String(tx.input ?? '0x')));
        return;
      }
      for (const log of (receipt.logs as { address: string; topics: Hex[]; data: Hex }[]) ?? []) {
        if (!router || log.address.toLowerCase() !== router) continue;
        let event: { to: Hex; asset: Hex; amount: bigint; memo: string };
        try {
          event = decodeEventLog({ abi: ROUTER_ABI, topics: log.topics as [Hex, ...Hex[]], data: log.data }).args as typeof event;
        } catch {
          continue;
        }
        // a deposit for a retired (or foreign) vault is lost: THORChain does not see it
        if (event.to.toLowerCase() !== vault) continue;
        const native = event.asset.toLowerCase() === ZERO_ADDRESS;
        const asset = native ? watched.native : this.tokenAssets.get(`${watched.chain}:${event.asset.toLowerCase()}`);
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
      if (toVault.length === 0) continue;
      const amount = toVault.reduce((sum, o) => sum + BigInt(Math.round(o.value * 1e8)), 0n);
      const memo = tx.vout.map((o) => opReturnText(Buffer.from(o.scriptPubKey.hex, 'hex'))).find((m) => m !== undefined) ?? '';
      this.inbound(tx.txid, 'BTC.BTC', amount, THOR_DECIMALS, memo);
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
