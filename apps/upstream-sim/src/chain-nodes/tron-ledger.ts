import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import type { Hex } from 'viem';
import {
  encodeTronRawData,
  tronBase58ToHex,
  tronHexToBase58,
  tronRawDataFromJson,
  tronRawDataToJson,
  tronSignerOf,
  tronTxId,
  type TronContract,
  type TronRawData,
} from '@chainpipe/chains';
import type { BlockLedger, ProducedBlock, ReorgResult } from './block-producer';
import { erc20Call, type CallEffect, type TokenState } from './evm-contracts';
import type { JsonObject } from './json';
import { WalletError, type TronWallet, type WalletAnswer, type WalletMethod } from './tron-node';
import { wantedFormat } from './tron-visible';

/** What a development account starts with on the simulated Tron: one million TRX (sun). */
export const FUNDED_TRX_SUN = 1_000_000n * 1_000_000n;
/** What a development account holds of every TRC-20 token (smallest units): 10^9 whole tokens of 6 decimals. */
export const FUNDED_TRC20_BALANCE = 10n ** 15n;

/**
 * The chain parameters the ledger charges by (`/wallet/getchainparameters`), mainnet's values:
 * bandwidth burns 1000 sun a byte once the 600 free bytes of an account are used, activating an
 * account by a transfer costs 0.1 TRX, energy 210 sun a unit.
 */
export const TRON_CHAIN_PARAMETERS = {
  getTransactionFee: 1000,
  getCreateAccountFee: 100_000,
  getCreateNewAccountFeeInSystemContract: 1_000_000,
  getEnergyFee: 210,
  getFreeNetLimit: 600,
  getMaxFeeLimit: 15_000_000_000,
} as const;

/** Energy of a TRC-20 `transfer` as USDT's costs it: to a holder, and to an address that holds none yet. */
const TRANSFER_ENERGY = { holder: 14_650, fresh: 29_650 } as const;
/** java-tron's default expiration window of a built transaction. */
const EXPIRATION_MS = 60_000;
const MAX_EXPIRATION_MS = 24 * 3600_000;
/** java-tron counts a transaction's bytes with 64 of result besides its own serialization. */
const RESULT_BYTES = 64;

/** `SIM_FUNDED_TRON_ADDRESSES` as the ledger takes it (`41…` hex → sun); an entry that is not a Tron address stops the boot. */
export function fundedTronAccounts(list: string): Map<string, bigint> {
  const funded = new Map<string, bigint>();
  for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    const hex = tronBase58ToHex(item);
    if (!hex) throw new Error(`SIM_FUNDED_TRON_ADDRESSES: ${JSON.stringify(item)} is not a Tron address`);
    funded.set(hex, FUNDED_TRX_SUN);
  }
  return funded;
}

export interface TronLedgerOptions {
  network: string;
  /** Development accounts with a starting balance (`41…` hex → sun). */
  funded: ReadonlyMap<string, bigint>;
  /** Wall clock (ms): a built transaction's time and expiration, the expiration check of a broadcast. */
  now: () => number;
}

interface PendingTx {
  txID: string;
  raw: TronRawData;
  rawHex: string;
  signature: string;
}

const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');
const evmForm = (tron: string) => `0x${tron.slice(2)}`;
const tronForm = (evm: string) => `41${evm.slice(2).toLowerCase()}`;
const text = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** java-tron's refusal of a broadcast: `{result: false, code, message}`, the message hex-encoded. */
const refusal = (code: string, message: string): WalletAnswer => ({ body: { code, message: text(message) }, format: null });

function addressArg(v: unknown, what: string): string {
  const hex = typeof v === 'string' ? (v.startsWith('T') ? tronBase58ToHex(v) : /^41[0-9a-fA-F]{40}$/.test(v) ? v.toLowerCase() : undefined) : undefined;
  if (!hex) throw new WalletError(`class java.lang.IllegalArgumentException : Invalid ${what}`);
  return hex;
}

function intArg(v: unknown, what: string): bigint {
  if (v === undefined) return 0n;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^[0-9]+$/.test(v)) return BigInt(v);
  throw new WalletError(`class java.lang.NumberFormatException : ${what}: ${JSON.stringify(v)}`);
}

/** A call's calldata: `data`, or `function_selector` + `parameter` as java-tron builds it. */
function callData(args: JsonObject): string {
  if (typeof args.data === 'string' && args.data !== '') return args.data.replace(/^0x/, '').toLowerCase();
  if (typeof args.function_selector !== 'string') throw new WalletError('class java.lang.IllegalArgumentException : function_selector or data is required');
  return keccakSelector(args.function_selector) + (typeof args.parameter === 'string' ? args.parameter.toLowerCase() : '');
}

function keccakSelector(signature: string): string {
  return hexOf(keccak_256(Buffer.from(signature.replace(/\s/g, ''), 'utf8'))).slice(0, 8);
}

/**
 * The moving part of the simulated Tron: TRX and TRC-20 balances, the transactions java-tron's
 * HTTP API builds (`createtransaction`, `triggersmartcontract`) and takes
 * (`broadcasttransaction`: the signature must recover the owner; an expired, unknown-reference
 * or duplicate one is refused with java-tron's codes), and blocks that take them in order, fees
 * burnt as mainnet burns them (bandwidth past the free 600 bytes, account activation, energy
 * up to the fee_limit). Produced blocks go into the fixtures' wallet, so every read method
 * (`getnowblock`, `gettransactioninfobyid` …) answers them. TRC-20 semantics at any contract
 * address (USDT-TRC20 at TR7NHqje…). Synchronous; the block producer gives block times.
 */
export class TronLedger implements BlockLedger {
  private readonly balances = new Map<string, bigint>();
  private readonly tokenBalances = new Map<string, bigint>();
  private readonly netUsed = new Map<string, number>();
  private readonly pending: PendingTx[] = [];
  private readonly seen = new Set<string>();
  /** The last produced blocks (at most 64): the balances before each and the transactions it took. */
  private readonly history: { number: number; before: [Map<string, bigint>, Map<string, bigint>, Map<string, number>]; txs: PendingTx[] }[] = [];
  /** Reorgs so far: a replacement block's id differs from the block it replaces. */
  private forks = 0;

  constructor(
    private readonly wallet: TronWallet,
    private readonly opts: TronLedgerOptions,
  ) {}

  get network(): string {
    return this.opts.network;
  }

  /** True once a transaction was ever sent: a dormant chain produces no blocks. */
  get active(): boolean {
    return this.seen.size > 0;
  }

  private exists(account: string): boolean {
    return this.balances.has(account) || this.opts.funded.has(account);
  }

  /** A TRX balance (sun) of an address in either form. */
  balanceOf(address: string): bigint {
    const a = address.startsWith('T') ? tronBase58ToHex(address) : address.toLowerCase();
    if (!a) return 0n;
    return this.balances.get(a) ?? this.opts.funded.get(a) ?? 0n;
  }

  tokenBalanceOf(token: string, holder: string): bigint {
    return this.tokenBalances.get(`${token}:${holder}`) ?? (this.opts.funded.has(holder) ? FUNDED_TRC20_BALANCE : 0n);
  }

  private head(): { number: number; id: string; timestamp: number } {
    const n = this.wallet.head;
    const block = n === null ? undefined : (this.wallet.blocks.get(n)?.value as JsonObject | undefined);
    const header = (block?.block_header as JsonObject | undefined)?.raw_data as JsonObject | undefined;
    return { number: n ?? 0, id: typeof block?.blockID === 'string' ? block.blockID : '00'.repeat(32), timestamp: typeof header?.timestamp === 'number' ? header.timestamp : 0 };
  }

  /** The unsigned transaction java-tron answers: its reference block the head, expiring a minute on. */
  private build(contract: TronContract, feeLimit: bigint, visible: boolean): JsonObject {
    const head = this.head();
    const now = Math.max(this.opts.now(), head.timestamp);
    const raw: TronRawData = {
      refBlockBytes: (head.number & 0xffff).toString(16).padStart(4, '0'),
      refBlockHash: head.id.slice(16, 32),
      expiration: now + EXPIRATION_MS,
      data: '',
      contract,
      timestamp: now,
      feeLimit,
    };
    const rawHex = hexOf(encodeTronRawData(raw));
    return { visible, txID: tronTxId(rawHex), raw_data: tronRawDataToJson(raw, visible), raw_data_hex: rawHex };
  }

  /** What a call of a contract does to the token state, run on a staged copy (kept only when `commit` and it did not revert). */
  private run(owner: string, contract: string, data: string, commit: boolean): CallEffect {
    const staged = new Map<string, bigint>();
    const state: TokenState = {
      balanceOf: (token, holder) => staged.get(`${token}:${holder}`) ?? this.tokenBalanceOf(tronForm(token), tronForm(holder)),
      allowance: () => 0n,
      move: (token, from, to, amount) => {
        const have = state.balanceOf(token, from);
        if (have < amount) return false;
        staged.set(`${token}:${from}`, have - amount);
        staged.set(`${token}:${to}`, state.balanceOf(token, to) + amount);
        return true;
      },
      setAllowance: () => undefined,
    };
    const effect = erc20Call({ from: evmForm(owner), to: evmForm(contract), value: 0n, input: `0x${data}` as Hex, timestampSec: 0 }, state);
    if (commit && !('reverted' in effect)) for (const [k, v] of staged) this.tokenBalances.set(k.split(':').map(tronForm).join(':'), v);
    return effect;
  }

  /** Energy of a call: a `transfer` costs more to an address holding none of the token yet. */
  private energyOf(contract: string, data: string): number {
    if (!data.startsWith('a9059cbb') || data.length < 8 + 128) return TRANSFER_ENERGY.holder;
    const to = `41${data.slice(8 + 24, 8 + 64)}`;
    return this.tokenBalanceOf(contract, to) > 0n ? TRANSFER_ENERGY.holder : TRANSFER_ENERGY.fresh;
  }

  /** TRX owed by the owner's transactions still in the pool (their amounts and at most their fees). */
  private owed(owner: string): bigint {
    return this.pending.filter((p) => p.raw.contract.owner === owner).reduce((sum, p) => sum + (p.raw.contract.type === 'TransferContract' ? p.raw.contract.amount : p.raw.contract.callValue) + this.maxFee(p.raw, p.rawHex), 0n);
  }

  private bytesOf(rawHex: string): number {
    // Transaction{raw_data, signature}: each a tag, a length and its bytes, plus the result java-tron counts
    return rawHex.length / 2 + 3 + 67 + RESULT_BYTES;
  }

  private maxFee(raw: TronRawData, rawHex: string): bigint {
    const bandwidth = BigInt(this.bytesOf(rawHex) * TRON_CHAIN_PARAMETERS.getTransactionFee);
    if (raw.contract.type === 'TransferContract') return bandwidth + (this.exists(raw.contract.to) ? 0n : BigInt(TRON_CHAIN_PARAMETERS.getCreateAccountFee));
    return bandwidth + raw.feeLimit;
  }

  /** The node HTTP API methods the ledger serves, beside the fixtures' read methods. */
  methods(): ReadonlyMap<string, WalletMethod> {
    return new Map<string, WalletMethod>([
      ['getaccount', (args) => this.getAccount(args)],
      ['getaccountresource', (args) => this.getAccountResource(args)],
      ['getchainparameters', () => ({ body: { chainParameter: Object.entries(TRON_CHAIN_PARAMETERS).map(([key, value]) => ({ key, value })) }, format: null })],
      ['createtransaction', (args) => this.createTransaction(args)],
      ['triggersmartcontract', (args) => this.triggerSmartContract(args)],
      ['triggerconstantcontract', (args) => this.triggerConstantContract(args)],
      ['broadcasttransaction', (args) => this.broadcast(args)],
    ]);
  }

  private getAccount(args: JsonObject): WalletAnswer {
    const visible = wantedFormat(args.visible) === 'base58';
    const a = addressArg(args.address, 'address');
    if (!this.exists(a)) return { body: {}, format: null };
    const balance = this.balanceOf(a);
    return { body: { address: visible ? tronHexToBase58(a) : a, ...(balance > 0n ? { balance: Number(balance) } : {}) }, format: visible ? 'base58' : 'hex' };
  }

  private getAccountResource(args: JsonObject): WalletAnswer {
    const a = addressArg(args.address, 'address');
    if (!this.exists(a)) return { body: {}, format: null };
    const used = this.netUsed.get(a) ?? 0;
    return { body: { freeNetLimit: TRON_CHAIN_PARAMETERS.getFreeNetLimit, ...(used > 0 ? { freeNetUsed: used } : {}) }, format: null };
  }

  private createTransaction(args: JsonObject): WalletAnswer {
    const visible = wantedFormat(args.visible) === 'base58';
    const owner = addressArg(args.owner_address, 'ownerAddress');
    const to = addressArg(args.to_address, 'toAddress');
    const amount = intArg(args.amount, 'amount');
    if (amount <= 0n) throw new WalletError('Contract validate error : Amount must be greater than 0.');
    if (owner === to) throw new WalletError('Contract validate error : Cannot transfer TRX to yourself.');
    if (!this.exists(owner)) throw new WalletError('Contract validate error : Validate TransferContract error, no OwnerAccount.');
    if (this.balanceOf(owner) < amount) throw new WalletError('Contract validate error : Validate TransferContract error, balance is not sufficient.');
    return { body: this.build({ type: 'TransferContract', owner, to, amount }, 0n, visible), format: visible ? 'base58' : 'hex' };
  }

  private triggerSmartContract(args: JsonObject): WalletAnswer {
    const visible = wantedFormat(args.visible) === 'base58';
    const owner = addressArg(args.owner_address, 'ownerAddress');
    const contract = addressArg(args.contract_address, 'contractAddress');
    const feeLimit = intArg(args.fee_limit, 'fee_limit');
    if (feeLimit > BigInt(TRON_CHAIN_PARAMETERS.getMaxFeeLimit)) throw new WalletError(`Contract validate error : feeLimit must be >= 0 and <= ${TRON_CHAIN_PARAMETERS.getMaxFeeLimit}`);
    const tx = this.build({ type: 'TriggerSmartContract', owner, contract, callValue: intArg(args.call_value, 'call_value'), data: callData(args) }, feeLimit, visible);
    return { body: { result: { result: true }, transaction: tx }, format: visible ? 'base58' : 'hex' };
  }

  private triggerConstantContract(args: JsonObject): WalletAnswer {
    const owner = addressArg(args.owner_address ?? `41${'00'.repeat(20)}`, 'ownerAddress');
    const contract = addressArg(args.contract_address, 'contractAddress');
    const data = callData(args);
    let constant: string;
    if (data.startsWith('70a08231') && data.length === 8 + 64) constant = this.tokenBalanceOf(contract, `41${data.slice(8 + 24)}`).toString(16).padStart(64, '0');
    else {
      const effect = this.run(owner, contract, data, false);
      if ('reverted' in effect) return { body: { result: { code: 'CONTRACT_EXE_ERROR', message: text(effect.reverted) }, energy_used: this.energyOf(contract, data) }, format: null };
      constant = '1'.padStart(64, '0');
    }
    return { body: { result: { result: true }, energy_used: this.energyOf(contract, data), constant_result: [constant] }, format: null };
  }

  /** java-tron's checks of a pushed transaction, in its order: signature, reference block, expiration, duplicate, contract. */
  private broadcast(args: JsonObject): WalletAnswer {
    let raw: TronRawData;
    try {
      raw = tronRawDataFromJson(args.raw_data);
    } catch (err) {
      throw new WalletError(`class java.lang.IllegalArgumentException : ${(err as Error).message}`);
    }
    const rawHex = hexOf(encodeTronRawData(raw));
    const txID = tronTxId(rawHex);
    const signatures = Array.isArray(args.signature) ? args.signature : [];
    const owner = raw.contract.owner;
    if (signatures.length !== 1 || typeof signatures[0] !== 'string' || tronSignerOf(txID, signatures[0]) !== owner) {
      return refusal('SIGERROR', `Validate signature error: ${txID} is not signed by the key of ${tronHexToBase58(owner)}`);
    }
    if (!this.referenceKnown(raw)) return refusal('TAPOS_ERROR', `Tapos check error: no block ${raw.refBlockBytes}/${raw.refBlockHash} among the recent ones`);
    const now = Math.max(this.opts.now(), this.head().timestamp);
    if (raw.expiration <= now || raw.expiration > now + MAX_EXPIRATION_MS) return refusal('TRANSACTION_EXPIRATION_ERROR', `Transaction expiration, transaction expiration time is ${raw.expiration}, but the latest time is ${now}`);
    if (this.seen.has(txID)) return refusal('DUP_TRANSACTION_ERROR', 'Dup transaction.');
    const available = this.balanceOf(owner) - this.owed(owner);
    const c = raw.contract;
    const value = c.type === 'TransferContract' ? c.amount : c.callValue;
    if (!this.exists(owner)) return refusal('CONTRACT_VALIDATE_ERROR', 'Contract validate error : Validate TransferContract error, no OwnerAccount.');
    if (available < value) return refusal('CONTRACT_VALIDATE_ERROR', 'Contract validate error : Validate TransferContract error, balance is not sufficient.');
    if (available < value + this.maxFee(raw, rawHex)) return refusal('BANDWITH_ERROR', 'Account resource insufficient error.');
    this.seen.add(txID);
    this.pending.push({ txID, raw, rawHex, signature: signatures[0].toLowerCase() });
    return { body: { result: true, txid: txID }, format: null };
  }

  private referenceKnown(raw: TronRawData): boolean {
    for (const [id, number] of this.wallet.blockIds) if ((number & 0xffff).toString(16).padStart(4, '0') === raw.refBlockBytes && id.slice(16, 32) === raw.refBlockHash) return true;
    return false;
  }

  /** Bandwidth of one transaction: the owner's free bytes while they last, else burnt. */
  private bandwidthFee(owner: string, bytes: number): { fee: bigint; usage: number } {
    const used = this.netUsed.get(owner) ?? 0;
    if (used + bytes <= TRON_CHAIN_PARAMETERS.getFreeNetLimit) {
      this.netUsed.set(owner, used + bytes);
      return { fee: 0n, usage: bytes };
    }
    return { fee: BigInt(bytes * TRON_CHAIN_PARAMETERS.getTransactionFee), usage: 0 };
  }

  /**
   * Mines the pool into the next block (after the fixtures' head) and adds it to the wallet; the
   * block in the node's form (`visible: false`), which the stream carries as the `block` dataset.
   */
  produceBlock(timestampSec: number): ProducedBlock {
    return this.mine(this.pending.splice(0), timestampSec);
  }

  /**
   * Replaces the last `depth` produced blocks, as a reorg does: balances (TRX, tokens, bandwidth)
   * go back to before the first of them, they leave the wallet (their ids, transactions and infos
   * are no longer served), and `depth` blocks with other ids take their numbers: their
   * transactions executed again in the first, or with `requeue` back in the pool (mined one
   * number on). Throws when fewer blocks are kept.
   */
  reorg(depth: number, timestampSec: number, opts: { requeue?: boolean } = {}): ReorgResult {
    const kept = this.history.length;
    if (!Number.isInteger(depth) || depth < 1 || depth > kept || this.history[kept - 1].number !== this.wallet.head) {
      throw new Error(`a reorg of ${depth} block(s) needs as many produced blocks at the head (${kept} kept)`);
    }
    const undone = this.history.splice(kept - depth);
    [this.balances, this.tokenBalances, this.netUsed].forEach((mine, i) => {
      mine.clear();
      for (const [k, v] of undone[0].before[i] as Map<string, never>) mine.set(k, v);
    });
    const displaced = undone.map(({ number }) => {
      const block = this.wallet.blocks.get(number)!.value;
      const id = String(block.blockID);
      for (const t of (block.transactions ?? []) as JsonObject[]) {
        this.wallet.txs.delete(String(t.txID));
        this.wallet.infos.delete(String(t.txID));
      }
      this.wallet.blocks.delete(number);
      this.wallet.blockIds.delete(id);
      this.wallet.blockInfos.delete(number);
      const header = (block.block_header as JsonObject).raw_data as JsonObject;
      return { number, hash: id, timestamp: Math.floor(Number(header.timestamp) / 1000) };
    });
    this.wallet.head = undone[0].number - 1;
    this.forks += 1;
    const txs = undone.flatMap((u) => u.txs);
    if (opts.requeue) this.pending.unshift(...txs);
    const produced = undone.map((_, i) => this.mine(opts.requeue || i > 0 ? [] : txs, timestampSec));
    return { displaced, produced };
  }

  private mine(txs: PendingTx[], timestampSec: number): ProducedBlock {
    const head = this.head();
    const number = head.number + 1;
    const timestamp = Math.max(timestampSec * 1000, head.timestamp + 1);
    this.history.push({ number, before: [new Map(this.balances), new Map(this.tokenBalances), new Map(this.netUsed)], txs });
    if (this.history.length > 64) this.history.shift();
    const fork = this.forks > 0 ? `:fork${this.forks}` : '';
    const blockID = number.toString(16).padStart(16, '0') + createHash('sha256').update(`${this.opts.network}:${number}:${head.id}${fork}:${txs.map((t) => t.txID).join(',')}`).digest('hex').slice(16);
    const transactions: JsonObject[] = [];
    const infos: JsonObject[] = [];
    for (const p of txs) {
      const { info, ret } = this.apply(p, number, timestamp);
      transactions.push({ ret: [{ contractRet: ret }], signature: [p.signature], txID: p.txID, raw_data: tronRawDataToJson(p.raw, false), raw_data_hex: p.rawHex });
      infos.push(info);
    }
    const block: JsonObject = {
      blockID,
      block_header: { raw_data: { number, txTrieRoot: '00'.repeat(32), witness_address: `41${'00'.repeat(20)}`, parentHash: head.id, version: 30, timestamp }, witness_signature: '00'.repeat(65) },
      ...(transactions.length > 0 ? { transactions } : {}),
    };
    this.wallet.blocks.set(number, { value: block, format: 'hex' });
    this.wallet.blockIds.set(blockID, number);
    this.wallet.blockInfos.set(number, { value: infos, format: 'hex' });
    transactions.forEach((t, i) => {
      this.wallet.txs.set(String(t.txID), { value: t, format: 'hex' });
      this.wallet.infos.set(String(t.txID), { value: infos[i], format: 'hex' });
    });
    this.wallet.head = number;
    return { number, block, receipts: [], dataset: 'block', item: block };
  }

  /** Executes one transaction: balances moved and fees burnt; its info and its contract result. */
  private apply(p: PendingTx, blockNumber: number, blockTimeStamp: number): { info: JsonObject; ret: string } {
    const c = p.raw.contract;
    const owner = c.owner;
    const { fee: netFee, usage } = this.bandwidthFee(owner, this.bytesOf(p.rawHex));
    const net = netFee > 0n ? { net_fee: Number(netFee) } : { net_usage: usage };
    const base = { id: p.txID, blockNumber, blockTimeStamp, contractResult: [''] };
    if (c.type === 'TransferContract') {
      const activation = this.exists(c.to) ? 0n : BigInt(TRON_CHAIN_PARAMETERS.getCreateAccountFee);
      const fee = netFee + activation;
      this.balances.set(owner, this.balanceOf(owner) - c.amount - fee);
      this.balances.set(c.to, this.balanceOf(c.to) + c.amount);
      return { info: { ...base, ...(fee > 0n ? { fee: Number(fee) } : {}), receipt: net }, ret: 'SUCCESS' };
    }
    const energy = this.energyOf(c.contract, c.data);
    const energyFee = BigInt(energy * TRON_CHAIN_PARAMETERS.getEnergyFee);
    let result: 'SUCCESS' | 'REVERT' | 'OUT_OF_ENERGY';
    let burnt = energyFee;
    let logs: JsonObject[] = [];
    if (energyFee > p.raw.feeLimit) {
      result = 'OUT_OF_ENERGY';
      burnt = p.raw.feeLimit;
    } else {
      const effect = this.run(owner, c.contract, c.data, true);
      if ('reverted' in effect) result = 'REVERT';
      else {
        result = 'SUCCESS';
        logs = effect.logs.map((l) => ({ address: l.address.slice(2).toLowerCase(), topics: l.topics.map((t) => t.slice(2)), data: l.data.slice(2) }));
      }
    }
    const fee = netFee + burnt;
    this.balances.set(owner, this.balanceOf(owner) - fee);
    const info: JsonObject = {
      ...base,
      ...(fee > 0n ? { fee: Number(fee) } : {}),
      contract_address: c.contract,
      receipt: { energy_fee: Number(burnt), energy_usage_total: energy, ...net, result },
      ...(logs.length > 0 ? { log: logs } : {}),
      ...(result === 'SUCCESS' ? {} : { result: 'FAILED', resMessage: text(result === 'REVERT' ? 'REVERT opcode executed' : 'Not enough energy') }),
    };
    return { info, ret: result };
  }
}
