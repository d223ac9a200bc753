import { secp256k1 } from '@noble/curves/secp256k1';
import { publicKeyToAddress } from 'viem/accounts';
import { decodeFunctionData, encodeAbiParameters, erc20Abi, keccak256, parseTransaction, serializeTransaction, toHex, type Hex, type TransactionSerializable } from 'viem';
import { RpcError } from '../json-rpc';
import { erc20Call, type CallEffect, type SimContract, type SimLog, type TokenState } from './evm-contracts';
import type { EvmChain } from './evm-node';
import { toQuantity, type JsonObject } from './json';
import type { ProducedBlock, ReorgResult } from './block-producer';

/** Gas of a plain transfer; calldata adds 16 per non-zero and 4 per zero byte (EIP-2028). */
const TRANSFER_GAS = 21_000n;
const ZERO_HASH = `0x${'00'.repeat(32)}`;
const EMPTY_BLOOM = `0x${'00'.repeat(256)}`;

export const GWEI = 10n ** 9n;
/** What a development account starts with on every EVM chain: 1000 ether. */
export const FUNDED_BALANCE_WEI = 1000n * 10n ** 18n;
/** What a development account holds of every token (smallest units): 10^12 whole tokens of 18 decimals. */
export const FUNDED_TOKEN_BALANCE = 10n ** 30n;

/** The EVM addresses of `SIM_FUNDED_ACCOUNTS` as the ledger takes them (its Solana ones are the Solana ledger's); a malformed address stops the boot. */
export function fundedAccounts(list: string): Map<string, bigint> {
  const funded = new Map<string, bigint>();
  for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!item.startsWith('0x')) continue;
    if (!/^0x[0-9a-fA-F]{40}$/.test(item)) throw new Error(`SIM_FUNDED_ACCOUNTS: ${JSON.stringify(item)} is not an EVM address`);
    funded.set(item.toLowerCase(), FUNDED_BALANCE_WEI);
  }
  return funded;
}

export interface EvmLedgerOptions {
  network: string;
  chainId: number;
  /** The base fee of every produced block (wei). */
  baseFeeWei: bigint;
  /** Development accounts with a starting balance of their own (lowercase address → wei). */
  funded: ReadonlyMap<string, bigint>;
}

interface PendingTx {
  hash: Hex;
  from: string;
  tx: TransactionSerializable;
  signature: { r: Hex; s: Hex; yParity: number };
  gasUsed: bigint;
  effectiveGasPrice: bigint;
}

/** The intrinsic gas of a transaction without contract execution (the simulator runs no code). */
export function intrinsicGas(input: Hex | undefined): bigint {
  let gas = TRANSFER_GAS;
  const bytes = (input ?? '0x').slice(2);
  for (let i = 0; i < bytes.length; i += 2) gas += bytes.slice(i, i + 2) === '00' ? 4n : 16n;
  return gas;
}

const rejected = (message: string) => new RpcError(-32000, message);

/** How many produced blocks a reorg can reach back (the state before each is kept). */
export const MAX_REORG_DEPTH = 64;

/** The moving state of the ledger, as it was before a produced block (what a reorg goes back to). */
interface LedgerState {
  balances: Map<string, bigint>;
  nonces: Map<string, number>;
  tokenBalances: Map<string, bigint>;
  allowances: Map<string, bigint>;
}

/**
 * The moving part of a simulated EVM chain: balances and nonces, signed transactions accepted by
 * `eth_sendRawTransaction` (signature recovered, chain id, nonce, fees and funds checked as geth
 * does), and blocks that take them in order. Produced blocks go into the same `EvmChain` the
 * fixtures fill, so every read method answers them. Value moves; tokens move by ERC-20 calls at
 * any address, and a few contracts run as simulated code (`deploy`: THORChain's router); gas is
 * the intrinsic gas. Synchronous and clock-free: the block producer gives the timestamps.
 */
export class EvmLedger {
  private readonly balances = new Map<string, bigint>();
  private readonly nonces = new Map<string, number>();
  private readonly pending: PendingTx[] = [];
  private readonly seen = new Set<string>();
  private refusing = false;
  /** Token balances and allowances: `token:holder`, `token:owner:spender` (lowercase). */
  private readonly tokenBalances = new Map<string, bigint>();
  private readonly allowances = new Map<string, bigint>();
  private readonly contracts = new Map<string, SimContract>();
  /** The last produced blocks (at most MAX_REORG_DEPTH): the state before each and the transactions it took. */
  private readonly history: { number: number; before: LedgerState; txs: PendingTx[] }[] = [];
  /** Reorgs so far: a replacement block's hash differs from the block it replaces. */
  private forks = 0;

  constructor(
    private readonly chain: EvmChain,
    private readonly opts: EvmLedgerOptions,
  ) {}

  get network(): string {
    return this.opts.network;
  }

  /** True once a transaction was ever sent: a dormant chain produces no blocks. */
  get active(): boolean {
    return this.seen.size > 0;
  }

  /** An account's ether: what it was funded with (`SIM_FUNDED_ACCOUNTS`, `anvil_setBalance`) and moved since; an address nobody paid holds nothing, as on a real chain. */
  balanceOf(address: string): bigint {
    const a = address.toLowerCase();
    return this.balances.get(a) ?? this.opts.funded.get(a) ?? 0n;
  }

  /** A token balance: development accounts hold `FUNDED_TOKEN_BALANCE` of every token, others nothing until paid. */
  tokenBalanceOf(token: string, holder: string): bigint {
    const h = holder.toLowerCase();
    return this.tokenBalances.get(`${token.toLowerCase()}:${h}`) ?? (this.opts.funded.has(h) ? FUNDED_TOKEN_BALANCE : 0n);
  }

  /** Code at an address: its calls run `contract` instead of the ERC-20 semantics every other address has. */
  deploy(address: string, contract: SimContract): void {
    this.contracts.set(address.toLowerCase(), contract);
  }

  /**
   * Runs a call against a staged copy of the token state: its effect, and the staged changes are
   * kept only when it did not revert (a reverted call changes nothing but the sender's gas).
   */
  private execute(call: Parameters<SimContract>[0], commit = true): CallEffect {
    const balances = new Map<string, bigint>();
    const allowances = new Map<string, bigint>();
    const state: TokenState = {
      balanceOf: (token, holder) => balances.get(`${token}:${holder}`) ?? this.tokenBalanceOf(token, holder),
      allowance: (token, owner, spender) => allowances.get(`${token}:${owner}:${spender}`) ?? this.allowances.get(`${token}:${owner}:${spender}`) ?? 0n,
      move: (token, from, to, amount) => {
        const have = state.balanceOf(token, from);
        if (have < amount) return false;
        balances.set(`${token}:${from}`, have - amount);
        balances.set(`${token}:${to}`, state.balanceOf(token, to) + amount);
        return true;
      },
      setAllowance: (token, owner, spender, amount) => void allowances.set(`${token}:${owner}:${spender}`, amount),
    };
    const contract = this.contracts.get(call.to);
    const effect = contract ? contract(call, state) : call.input.length > 2 ? erc20Call(call, state) : { logs: [], valueTo: call.to };
    if ('reverted' in effect || !commit) return effect;
    for (const [k, v] of balances) this.tokenBalances.set(k, v);
    for (const [k, v] of allowances) this.allowances.set(k, v);
    return effect;
  }

  /**
   * A read-only call at the head (`eth_call`): the ERC-20 views `balanceOf` and `allowance` of
   * the token at `to`; anything else reverts (the simulator runs no other code read-only).
   */
  call(to: string, input: Hex): Hex {
    let decoded: ReturnType<typeof decodeFunctionData<typeof erc20Abi>>;
    try {
      decoded = decodeFunctionData({ abi: erc20Abi, data: input });
    } catch {
      throw new RpcError(3, 'execution reverted');
    }
    const token = to.toLowerCase();
    if (decoded.functionName === 'balanceOf') return encodeAbiParameters([{ type: 'uint256' }], [this.tokenBalanceOf(token, decoded.args[0])]);
    if (decoded.functionName === 'allowance') {
      const [owner, spender] = decoded.args;
      return encodeAbiParameters([{ type: 'uint256' }], [this.allowances.get(`${token}:${owner.toLowerCase()}:${spender.toLowerCase()}`) ?? 0n]);
    }
    throw new RpcError(3, 'execution reverted');
  }

  /**
   * What a node's gas estimate does first (`eth_estimateGas`): the call run at the head and its
   * changes dropped; a call that would revert is refused as geth refuses it (`execution
   * reverted: <reason>`, code 3), e.g. a router deposit before its `approve` is mined.
   */
  dryRun(call: { from: string; to: string; value: bigint; input: Hex }): void {
    const effect = this.execute({ from: call.from.toLowerCase(), to: call.to.toLowerCase(), value: call.value, input: call.input, timestampSec: Math.floor(Date.now() / 1000) }, false);
    if ('reverted' in effect) throw new RpcError(3, `execution reverted: ${effect.reverted}`);
  }

  /** Sets an account's balance, as development nodes do (`anvil_setBalance`, `hardhat_setBalance`): a development wallet funded after the start. */
  setBalance(address: string, wei: bigint): void {
    this.balances.set(address.toLowerCase(), wei);
  }

  /** Mined nonce, or with `pending` the next one the pool expects. */
  nonceOf(address: string, pending: boolean): number {
    const a = address.toLowerCase();
    const mined = this.nonces.get(a) ?? 0;
    return pending ? mined + this.pending.filter((p) => p.from === a).length : mined;
  }

  gasPrice(): bigint {
    return this.opts.baseFeeWei + this.priorityFee();
  }

  priorityFee(): bigint {
    return this.opts.baseFeeWei / 10n || 1n;
  }

  /** A node outage of the broadcast path (tests of senders that must store before they broadcast): every raw transaction refused. */
  refuseBroadcasts(refuse: boolean): void {
    this.refusing = refuse;
  }

  /** Verifies and queues a signed raw transaction; its hash, or the node's error. */
  submitRaw(raw: string): Hex {
    if (this.refusing) throw rejected('simulated outage: the node takes no transactions');
    if (!/^0x([0-9a-fA-F]{2})+$/.test(raw)) throw rejected('rlp: expected input string or byte');
    const hash = keccak256(raw as Hex);
    if (this.seen.has(hash)) throw rejected('already known');
    let parsed: ReturnType<typeof parseTransaction>;
    try {
      parsed = parseTransaction(raw as Hex);
    } catch (err) {
      throw rejected(`rlp: ${(err as Error).message.split('\n')[0]}`);
    }
    const { r, s, v, yParity, ...unsigned } = parsed as TransactionSerializable & { r?: Hex; s?: Hex; v?: bigint; yParity?: number };
    if (!r || !s) throw rejected('invalid transaction v, r, s values');
    if (unsigned.chainId === undefined) throw rejected('only replay-protected (EIP-155) transactions allowed over RPC');
    if (unsigned.chainId !== this.opts.chainId) throw rejected(`invalid chain id for signer: have ${unsigned.chainId} want ${this.opts.chainId}`);
    const parity = yParity ?? (v !== undefined ? Number((v - 35n - 2n * BigInt(this.opts.chainId)) % 2n) : -1);
    if (parity !== 0 && parity !== 1) throw rejected('invalid transaction v, r, s values');
    let from: string;
    try {
      const digest = keccak256(serializeTransaction(unsigned)).slice(2);
      const sig = new secp256k1.Signature(BigInt(r), BigInt(s)).addRecoveryBit(parity);
      if (sig.hasHighS()) throw new Error('high s');
      from = publicKeyToAddress(toHex(sig.recoverPublicKey(digest).toRawBytes(false))).toLowerCase();
    } catch {
      throw rejected('invalid sender');
    }
    const nonce = unsigned.nonce ?? 0;
    const expected = this.nonceOf(from, true);
    if (nonce < expected) throw rejected('nonce too low');
    if (nonce > expected) throw rejected(`nonce too high: next nonce ${expected}, tx nonce ${nonce}`);
    const gas = unsigned.gas ?? 0n;
    const gasUsed = intrinsicGas(unsigned.data);
    if (gas < gasUsed) throw rejected(`intrinsic gas too low: have ${gas}, want ${gasUsed}`);
    const base = this.opts.baseFeeWei;
    let effectiveGasPrice: bigint;
    let maxPrice: bigint;
    if (unsigned.maxFeePerGas !== undefined) {
      maxPrice = unsigned.maxFeePerGas;
      if (maxPrice < base) throw rejected(`max fee per gas less than block base fee: maxFeePerGas: ${maxPrice}, baseFee: ${base}`);
      const tip = unsigned.maxPriorityFeePerGas ?? 0n;
      effectiveGasPrice = base + tip < maxPrice ? base + tip : maxPrice;
    } else {
      maxPrice = unsigned.gasPrice ?? 0n;
      if (maxPrice < base) throw rejected('transaction underpriced');
      effectiveGasPrice = maxPrice;
    }
    const value = unsigned.value ?? 0n;
    const owed = this.pending.filter((p) => p.from === from).reduce((sum, p) => sum + (p.tx.value ?? 0n) + p.gasUsed * p.effectiveGasPrice, 0n);
    const available = this.balanceOf(from) - owed;
    if (available < value + gas * maxPrice) throw rejected(`insufficient funds for gas * price + value: balance ${available}, tx cost ${value + gas * maxPrice}`);
    this.seen.add(hash);
    this.pending.push({ hash, from, tx: unsigned, signature: { r, s, yParity: parity }, gasUsed, effectiveGasPrice });
    return hash;
  }

  /**
   * Mines the pending transactions into the next block and adds it to the chain; the block with
   * its receipts, as the `block_with_receipts` dataset carries it. Calls run: a deployed
   * contract's code, else ERC-20 semantics (`transfer`, `approve`, `transferFrom` at the token's
   * address); a reverted call moves nothing and is charged its gas.
   */
  produceBlock(timestampSec: number): ProducedBlock {
    return this.mine(this.pending.splice(0), timestampSec);
  }

  /**
   * Replaces the last `depth` produced blocks, as a chain reorganisation does: the state goes
   * back to before the first of them, they leave the chain (their hashes, transactions and
   * receipts are no longer served), and `depth` other blocks take their heights. Their
   * transactions are mined again in the first replacement block, or with `requeue` go back to the
   * pool ahead of the pending ones (the replacement blocks are empty; they are mined in the next
   * block, one height on). Throws when fewer than `depth` produced blocks are kept.
   */
  reorg(depth: number, timestampSec: number, opts: { requeue?: boolean } = {}): ReorgResult {
    const kept = this.history.length;
    if (!Number.isInteger(depth) || depth < 1 || depth > kept || this.history[kept - 1].number !== this.chain.head) {
      throw new Error(`a reorg of ${depth} block(s) needs as many produced blocks at the head (${kept} kept)`);
    }
    const undone = this.history.splice(kept - depth);
    const { before } = undone[0];
    for (const [mine, saved] of [[this.balances, before.balances], [this.nonces, before.nonces], [this.tokenBalances, before.tokenBalances], [this.allowances, before.allowances]] as [Map<string, unknown>, Map<string, unknown>][]) {
      mine.clear();
      for (const [k, v] of saved) mine.set(k, v);
    }
    const displaced = undone.map(({ number }) => {
      const block = this.chain.blocks.get(number)!;
      const hash = String(block.hash);
      for (const tx of block.transactions as JsonObject[]) {
        this.chain.txs.delete(String(tx.hash));
        this.chain.receipts.delete(String(tx.hash));
      }
      this.chain.blocks.delete(number);
      this.chain.blockNumbers.delete(hash);
      this.chain.blockReceipts.delete(number);
      this.chain.callTraces.delete(number);
      return { number, hash, timestamp: Number(block.timestamp) };
    });
    this.chain.head = undone[0].number - 1;
    this.forks += 1;
    const txs = undone.flatMap((u) => u.txs);
    if (opts.requeue) this.pending.unshift(...txs);
    const produced = undone.map((_, i) => this.mine(opts.requeue || i > 0 ? [] : txs, timestampSec));
    return { displaced, produced };
  }

  private snapshot(): LedgerState {
    return { balances: new Map(this.balances), nonces: new Map(this.nonces), tokenBalances: new Map(this.tokenBalances), allowances: new Map(this.allowances) };
  }

  private mine(txs: PendingTx[], timestampSec: number): ProducedBlock {
    const number = (this.chain.head ?? 0) + 1;
    const parent = this.chain.blocks.get(number - 1);
    const parentHash = typeof parent?.hash === 'string' ? parent.hash : ZERO_HASH;
    this.history.push({ number, before: this.snapshot(), txs });
    if (this.history.length > MAX_REORG_DEPTH) this.history.shift();
    const fork = this.forks > 0 ? `:fork${this.forks}` : '';
    const blockHash = keccak256(toHex(`${this.opts.network}:${number}:${parentHash}${fork}:${txs.map((t) => t.hash).join(',')}`));
    const common = { blockHash, blockNumber: toQuantity(number) };
    let cumulative = 0n;
    const transactions: JsonObject[] = [];
    const receipts: JsonObject[] = [];
    const traces: unknown[] = [];
    let logIndex = 0;
    txs.forEach((p, i) => {
      const { tx } = p;
      const to = tx.to ? tx.to.toLowerCase() : null;
      const value = tx.value ?? 0n;
      const fee = p.gasUsed * p.effectiveGasPrice;
      const effect: CallEffect = to ? this.execute({ from: p.from, to, value, input: tx.data ?? '0x', timestampSec }) : { logs: [], valueTo: '' };
      const ok = !('reverted' in effect);
      const logs: SimLog[] = ok ? effect.logs : [];
      const valueTo = ok && effect.valueTo ? effect.valueTo : to;
      this.balances.set(p.from, this.balanceOf(p.from) - (ok ? value : 0n) - fee);
      if (ok && valueTo) this.balances.set(valueTo, this.balanceOf(valueTo) + value);
      this.nonces.set(p.from, this.nonceOf(p.from, false) + 1);
      cumulative += p.gasUsed;
      const type = tx.maxFeePerGas !== undefined ? '0x2' : tx.accessList ? '0x1' : '0x0';
      const index = toQuantity(i);
      transactions.push({
        ...common,
        hash: p.hash,
        from: p.from,
        to,
        value: toQuantity(value),
        nonce: toQuantity(tx.nonce ?? 0),
        gas: toQuantity(tx.gas ?? 0n),
        gasPrice: toQuantity(p.effectiveGasPrice),
        ...(tx.maxFeePerGas !== undefined ? { maxFeePerGas: toQuantity(tx.maxFeePerGas), maxPriorityFeePerGas: toQuantity(tx.maxPriorityFeePerGas ?? 0n) } : {}),
        input: tx.data ?? '0x',
        transactionIndex: index,
        type,
        chainId: toQuantity(this.opts.chainId),
        ...(type === '0x0' ? {} : { accessList: tx.accessList ?? [] }),
        v: toQuantity(type === '0x0' ? BigInt(p.signature.yParity) + 35n + 2n * BigInt(this.opts.chainId) : BigInt(p.signature.yParity)),
        ...(type === '0x0' ? {} : { yParity: toQuantity(p.signature.yParity) }),
        r: p.signature.r,
        s: p.signature.s,
      });
      receipts.push({
        ...common,
        transactionHash: p.hash,
        transactionIndex: index,
        from: p.from,
        to,
        contractAddress: null,
        cumulativeGasUsed: toQuantity(cumulative),
        gasUsed: toQuantity(p.gasUsed),
        effectiveGasPrice: toQuantity(p.effectiveGasPrice),
        logs: logs.map((l) => ({ ...l, ...common, transactionHash: p.hash, transactionIndex: index, logIndex: toQuantity(logIndex++), removed: false })),
        logsBloom: EMPTY_BLOOM,
        status: ok ? '0x1' : '0x0',
        type,
      });
      // a contract that passed the value on (a router paying its vault) made an internal call
      const calls = ok && value > 0n && valueTo && valueTo !== to ? [{ type: 'CALL', from: to, to: valueTo, value: toQuantity(value), gas: '0x0', gasUsed: '0x0', input: '0x', output: '0x' }] : undefined;
      traces.push({
        txHash: p.hash,
        result: {
          type: 'CALL', from: p.from, to, value: toQuantity(value), gas: toQuantity(tx.gas ?? 0n), gasUsed: toQuantity(p.gasUsed), input: tx.data ?? '0x', output: '0x',
          ...(ok ? {} : { error: 'execution reverted', revertReason: (effect as { reverted: string }).reverted }),
          ...(calls ? { calls } : {}),
        },
      });
    });
    const block: JsonObject = {
      number: toQuantity(number),
      hash: blockHash,
      parentHash,
      timestamp: toQuantity(timestampSec),
      miner: `0x${'00'.repeat(20)}`,
      gasLimit: toQuantity(30_000_000),
      gasUsed: toQuantity(cumulative),
      baseFeePerGas: toQuantity(this.opts.baseFeeWei),
      logsBloom: EMPTY_BLOOM,
      transactions,
    };
    this.chain.blocks.set(number, block);
    this.chain.blockNumbers.set(blockHash, number);
    this.chain.blockReceipts.set(number, receipts);
    this.chain.callTraces.set(number, traces);
    transactions.forEach((t, i) => {
      this.chain.txs.set(String(t.hash), t);
      this.chain.receipts.set(String(t.hash), receipts[i]);
    });
    this.chain.head = number;
    return { number, block, receipts, dataset: 'block_with_receipts', item: { block, receipts } };
  }
}
