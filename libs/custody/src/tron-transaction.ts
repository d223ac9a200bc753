import { NETWORKS, decodeTronRawData, tronBase58ToHex, tronRawDataFromJson, tronTxId, type ChainOrigins, type TronContract, type TronRawData } from '@chainpipe/chains';
import { upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import type { DepositKeyRef } from './evm-transaction';
import type { FeePlan, SignedTransfer, TransferCall, TransferChain, TransferReceipt } from './outgoing-transfers';
import type { Signer } from './signer';

/**
 * What a Tron transfer will cost at most (sun). A TRX transfer burns bandwidth (its bytes at the
 * chain's `getTransactionFee` once the account's free bandwidth is gone; deposit addresses are
 * planned as having none) and, to an account that does not exist yet, the activation fees; a
 * contract call also burns energy, up to its `fee_limit`.
 */
export interface TronFeePlan extends FeePlan {
  bandwidthFee: bigint;
  activationFee: bigint;
  /** The `fee_limit` of a contract call (0 for a TRX transfer). */
  feeLimit: bigint;
}

function isTronFeePlan(plan: FeePlan | undefined): plan is TronFeePlan {
  return plan !== undefined && 'bandwidthFee' in plan && 'activationFee' in plan && 'feeLimit' in plan;
}

/**
 * Bandwidth planned per transaction: java-tron charges the serialized transaction plus 64 bytes
 * of result; a one-signature TRX transfer is about 200–270 bytes, a TRC-20 `transfer` about
 * 340. Planned above both.
 */
const TRANSFER_BYTES = 300n;
const CALL_BYTES = 400n;
/** A contract call's fee_limit: twice the energy the node estimates (a first payment to a holder costs about twice a later one). */
const ENERGY_HEADROOM = 2n;
/** java-tron refuses an expiration more than 24 h after the transaction's time. */
const MAX_EXPIRATION_MS = 24 * 3600_000;

/** A java-tron answer `{"Error": …}` or a refusal `{code, message}` (message hex-encoded). */
export class TronNodeError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TronNodeError';
  }
}

const hexText = (v: unknown): string => {
  if (typeof v !== 'string') return '';
  return /^([0-9a-fA-F]{2})+$/.test(v) ? Buffer.from(v, 'hex').toString('utf8') : v;
};

/** The HTTP API base of a Tron origin: java-tron and TronGrid serve `/wallet/*` beside `/jsonrpc` (the origin the JSON-RPC readers use). */
export function tronWalletBase(origin: string): string {
  return origin.replace(/\/+$/, '').replace(/\/jsonrpc$/, '');
}

export interface TronOrigin {
  /** Base of java-tron's HTTP API (`<base>/wallet/<method>`). */
  url: string;
  timeoutMs: number;
  now?: () => number;
}

interface NodeTransaction {
  txID: string;
  raw_data: unknown;
  raw_data_hex: string;
}

const same = (a: TronRawData, b: TronRawData) => JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) === JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * Sends from Tron deposit addresses through java-tron's HTTP API: the node builds the unsigned
 * transaction (`createtransaction`, `triggersmartcontract`), which is never signed blindly: its
 * txID must be the sha256 of its raw_data bytes, and those bytes must decode to exactly the
 * transfer asked for (owner, recipient or contract, amount or calldata, fee_limit, no memo, an
 * expiration ahead). The Signer signs the txID (family `tvm`). A `call` with `data` is a
 * TRC-20 call (`call.to` the token contract, `data` its ABI calldata); without, a TRX transfer.
 */
export class TronSender implements TransferChain {
  private readonly now: () => number;

  constructor(
    private readonly origin: TronOrigin,
    private readonly signer: Signer,
  ) {
    this.now = origin.now ?? Date.now;
  }

  private async wallet(method: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const answer = await upstreamJson({ url: upstreamUrl(this.origin.url, `/wallet/${method}`), method: 'POST', json: body, timeoutMs: this.origin.timeoutMs });
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new TronNodeError(`${method}: the node answered something that is not an object`);
    const o = answer as Record<string, any>;
    if (typeof o.Error === 'string') throw new TronNodeError(`${method}: ${o.Error}`);
    return o;
  }

  async balanceOf(address: string): Promise<bigint> {
    const account = await this.wallet('getaccount', { address, visible: true });
    return BigInt(account.balance ?? 0);
  }

  /** A TRC-20 balance: the token's `balanceOf(holder)` run by the node without a transaction. */
  async tokenBalanceOf(token: string, holder: string): Promise<bigint> {
    const account = tronBase58ToHex(holder);
    if (!account) throw new Error(`${holder} is not a Tron address`);
    const answer = await this.wallet('triggerconstantcontract', { owner_address: holder, contract_address: token, function_selector: 'balanceOf(address)', parameter: account.slice(2).padStart(64, '0'), visible: true });
    const out = answer.constant_result?.[0];
    if (answer.result?.result !== true || typeof out !== 'string' || !/^[0-9a-fA-F]{1,64}$/.test(out)) throw new TronNodeError(`balanceOf of ${token}: the node answered no result`);
    return BigInt(`0x${out}`);
  }

  private async chainParameters(): Promise<Map<string, bigint>> {
    const answer = await this.wallet('getchainparameters', {});
    const map = new Map<string, bigint>();
    for (const p of Array.isArray(answer.chainParameter) ? answer.chainParameter : []) if (typeof p?.key === 'string') map.set(p.key, BigInt(p.value ?? 0));
    return map;
  }

  /**
   * The fee plan of a transfer from `from` to `to` (with `data`: a call of the contract `to`):
   * bandwidth at the chain's price, the activation fees when a TRX recipient does not exist yet,
   * and for a call its fee_limit (the node's energy estimate at the energy price, doubled).
   */
  async feePlan(from: string, to: string, data?: string): Promise<TronFeePlan> {
    const params = await this.chainParameters();
    const param = (key: string) => {
      const v = params.get(key);
      if (v === undefined) throw new TronNodeError(`getchainparameters: no ${key}`);
      return v;
    };
    const perByte = param('getTransactionFee');
    if (data) {
      const estimate = await this.wallet('triggerconstantcontract', { owner_address: from, contract_address: to, data: data.replace(/^0x/, ''), visible: true });
      const energy = estimate.energy_used;
      if (estimate.result?.result !== true || typeof energy !== 'number' || energy <= 0) throw new TronNodeError(`triggerconstantcontract: no energy estimate for a call of ${to}`);
      const feeLimit = BigInt(energy) * param('getEnergyFee') * ENERGY_HEADROOM;
      const bandwidthFee = CALL_BYTES * perByte;
      return { bandwidthFee, activationFee: 0n, feeLimit, maxNetworkFee: bandwidthFee + feeLimit };
    }
    const recipient = await this.wallet('getaccount', { address: to, visible: true });
    const activationFee = recipient.address === undefined ? param('getCreateAccountFee') + param('getCreateNewAccountFeeInSystemContract') : 0n;
    const bandwidthFee = TRANSFER_BYTES * perByte;
    return { bandwidthFee, activationFee, feeLimit: 0n, maxNetworkFee: bandwidthFee + activationFee };
  }

  /** The node's unsigned transaction, checked against what was asked; throws when it is anything else. */
  private checked(tx: NodeTransaction | undefined, expected: TronContract, feeLimit: bigint): NodeTransaction {
    if (!tx || typeof tx.txID !== 'string' || typeof tx.raw_data_hex !== 'string') throw new TronNodeError('the node built no transaction');
    if (tronTxId(tx.raw_data_hex) !== tx.txID.toLowerCase()) throw new Error(`the node's txID ${tx.txID} is not the sha256 of its raw_data`);
    const decoded = decodeTronRawData(Buffer.from(tx.raw_data_hex, 'hex'));
    // the JSON is what broadcasttransaction sends: it must say what the signed bytes say
    if (!same(decoded, tronRawDataFromJson(tx.raw_data))) throw new Error(`the node's raw_data of ${tx.txID} does not match its raw_data_hex`);
    const want: TronRawData = { ...decoded, data: '', contract: expected, feeLimit };
    if (!same(decoded, want)) throw new Error(`the node built ${tx.txID} for another transfer than asked`);
    const now = this.now();
    if (decoded.expiration <= now || decoded.expiration > now + MAX_EXPIRATION_MS) throw new Error(`the node's transaction ${tx.txID} expires at ${decoded.expiration}, outside the next 24 hours`);
    return tx;
  }

  /** Has the node build the transfer, checks it, and has the signer sign its txID; nothing is sent. */
  async sign(from: DepositKeyRef, call: TransferCall): Promise<SignedTransfer> {
    if (call.fees !== undefined && !isTronFeePlan(call.fees)) throw new Error('the fee terms of a Tron transfer need bandwidth, activation and fee_limit');
    const owner = tronBase58ToHex(from.address);
    const to = tronBase58ToHex(call.to);
    if (!owner || !to) throw new Error(`a Tron transfer from ${from.address} to ${call.to}: not Tron addresses`);
    if (call.value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`a Tron transfer of ${call.value} sun is beyond what the node's JSON carries exactly`);
    let tx: NodeTransaction;
    if (call.data) {
      const fees = isTronFeePlan(call.fees) ? call.fees : await this.feePlan(from.address, call.to, call.data);
      const data = call.data.replace(/^0x/, '').toLowerCase();
      const built = await this.wallet('triggersmartcontract', { owner_address: from.address, contract_address: call.to, data, call_value: Number(call.value), fee_limit: Number(fees.feeLimit), visible: true });
      if (built.result?.result !== true) throw new TronNodeError(`triggersmartcontract: ${hexText(built.result?.message) || 'refused'}`, built.result?.code);
      tx = this.checked(built.transaction, { type: 'TriggerSmartContract', owner, contract: to, callValue: call.value, data }, fees.feeLimit);
    } else {
      const built = await this.wallet('createtransaction', { owner_address: from.address, to_address: call.to, amount: Number(call.value), visible: true });
      tx = this.checked(built as NodeTransaction, { type: 'TransferContract', owner, to, amount: call.value }, 0n);
    }
    const [sig] = await this.signer.sign({ family: 'tvm', index: from.index, address: from.address, digests: [tx.txID.toLowerCase()] });
    const signature = `${sig.r}${sig.s}0${sig.recovery}`;
    const raw = JSON.stringify({ visible: true, txID: tx.txID.toLowerCase(), raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex, signature: [signature] });
    return { raw, hash: tx.txID.toLowerCase(), nonce: null };
  }

  /**
   * Broadcasts a signed transaction. A node that has it (`DUP_TRANSACTION_ERROR`) took it:
   * `known`. An expired one, or one whose reference block is gone (`TRANSACTION_EXPIRATION_ERROR`,
   * `TAPOS_ERROR`; java-tron checks these before duplicates) is `known` when the chain has it,
   * else it can never be mined: `replaced`, as an EVM transaction whose nonce went elsewhere.
   */
  async broadcast(raw: string, hash: string): Promise<'accepted' | 'known' | 'replaced'> {
    const answer = await this.wallet('broadcasttransaction', JSON.parse(raw) as Record<string, unknown>);
    if (answer.result === true) {
      if (typeof answer.txid === 'string' && answer.txid.toLowerCase() !== hash.toLowerCase()) throw new Error(`the node named the transaction ${answer.txid}, not ${hash}`);
      return 'accepted';
    }
    const code = typeof answer.code === 'string' ? answer.code : '';
    if (code === 'DUP_TRANSACTION_ERROR') return 'known';
    if (code === 'TRANSACTION_EXPIRATION_ERROR' || code === 'TAPOS_ERROR') {
      const known = await this.wallet('gettransactionbyid', { value: hash.replace(/^0x/, '').toLowerCase() });
      return typeof known.txID === 'string' ? 'known' : 'replaced';
    }
    throw new TronNodeError(`broadcasttransaction: ${code || 'refused'} ${hexText(answer.message)}`.trim(), code || undefined);
  }

  /** The transaction's outcome from its info (block, contract result) and the head block for confirmations. */
  async receipt(hash: string): Promise<TransferReceipt> {
    const value = hash.replace(/^0x/, '').toLowerCase();
    const [info, head] = await Promise.all([this.wallet('gettransactioninfobyid', { value }), this.wallet('getnowblock', {})]);
    if (typeof info.blockNumber !== 'number') return { mined: false };
    const headNumber = head.block_header?.raw_data?.number;
    if (typeof headNumber !== 'number') throw new TronNodeError('getnowblock: no block number');
    // a TRX transfer's info has no contract receipt; a failed one says result FAILED
    const success = info.result !== 'FAILED' && (info.receipt?.result === undefined || info.receipt.result === 'SUCCESS');
    return { mined: true, success, blockNumber: info.blockNumber, confirmations: headNumber - info.blockNumber + 1 };
  }
}

/**
 * The Tron senders of deposit addresses by chain type (`tron`): the mainnet (deposits are seen on
 * the monitored mainnets) through its configured origin's HTTP API. Undefined for other chain types.
 */
export function tronSendersByChainType(origins: ChainOrigins, signer: Signer, timeoutMs: number): (chainType: string) => TronSender | undefined {
  const senders = new Map<string, TronSender>();
  for (const n of NETWORKS) {
    if (n.family !== 'tvm' || n.testnet || senders.has(n.chainType)) continue;
    const origin = origins.urlFor(n.network);
    if (origin) senders.set(n.chainType, new TronSender({ url: tronWalletBase(origin), timeoutMs }, signer));
  }
  return (chainType) => senders.get(chainType);
}
