import { encodeFunctionData, erc20Abi, keccak256, serializeTransaction, stringToHex, type Hex, type TransactionSerializableEIP1559 } from 'viem';
import { OriginError, jsonRpcCall } from '@chainpipe/upstreams';
import type { FeePlan, SignedTransfer, TransferCall, TransferChain, TransferReceipt } from './outgoing-transfers';
import type { Signer } from './signer';

/** A deposit address and the index of the key that owns it. */
export interface DepositKeyRef {
  index: number;
  address: string;
}

/** An EIP-1559 transaction from a deposit address, every field decided by the caller. */
export interface EvmTransactionFields {
  chainId: number;
  nonce: number;
  to: string;
  value: bigint;
  /** Calldata; a THORChain memo rides here as UTF-8 for a native deposit. */
  data?: Hex;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * Builds the transaction, has the signer sign the keccak of its unsigned encoding with the key
 * of the deposit index (the signer refuses a key that does not own `from.address`), and encodes
 * it signed. The raw transaction and its hash, as the chain will name it.
 */
export async function signEvmTransaction(signer: Signer, from: DepositKeyRef, fields: EvmTransactionFields, signal?: AbortSignal): Promise<{ raw: Hex; hash: Hex }> {
  const unsigned: TransactionSerializableEIP1559 = {
    type: 'eip1559',
    chainId: fields.chainId,
    nonce: fields.nonce,
    to: fields.to as Hex,
    value: fields.value,
    data: fields.data,
    gas: fields.gas,
    maxFeePerGas: fields.maxFeePerGas,
    maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
  };
  const digest = keccak256(serializeTransaction(unsigned)).slice(2);
  const [sig] = await signer.sign({ family: 'evm', index: from.index, address: from.address.toLowerCase(), digests: [digest] }, signal);
  const raw = serializeTransaction(unsigned, { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: sig.recovery });
  return { raw, hash: keccak256(raw) };
}

/** A THORChain memo as the calldata of a native EVM deposit (the chain's observers read it as UTF-8). */
export function memoCalldata(memo: string): Hex {
  return stringToHex(memo);
}

export interface EvmOrigin {
  /** The chain's JSON-RPC origin. */
  url: string;
  chainId: number;
  timeoutMs: number;
}

/** What an EVM transfer will cost at most: the gas limit at the fee cap (maxNetworkFee = gas × maxFeePerGas). */
export interface EvmFeePlan extends FeePlan {
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

function isEvmFeePlan(plan: FeePlan | undefined): plan is EvmFeePlan {
  return plan !== undefined && 'gas' in plan && 'maxFeePerGas' in plan && 'maxPriorityFeePerGas' in plan;
}

const quantity = (v: unknown, what: string): bigint => {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]+$/.test(v)) throw new Error(`the origin answered ${what} that is not a quantity`);
  return BigInt(v);
};

/**
 * Sends value from deposit addresses through a chain origin: fees from the node (the cap at
 * twice the gas price, as wallets do, so a rising base fee does not strand it), the nonce from
 * the pending count, the gas the node estimates. As a `TransferChain` it signs without sending,
 * so `OutgoingTransfers` can store the transaction before its broadcast.
 */
export class EvmSender implements TransferChain {
  constructor(
    private readonly origin: EvmOrigin,
    private readonly signer: Signer,
  ) {}

  private rpc(method: string, params: unknown[]): Promise<unknown> {
    return jsonRpcCall(this.origin.url, method, params, this.origin.timeoutMs);
  }

  async balanceOf(address: string): Promise<bigint> {
    return quantity(await this.rpc('eth_getBalance', [address, 'latest']), 'a balance');
  }

  /** What `holder` holds of an ERC-20 token (`balanceOf`, smallest units). */
  async tokenBalanceOf(token: string, holder: string): Promise<bigint> {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [holder as Hex] });
    return quantity(await this.rpc('eth_call', [{ to: token, data }, 'latest']), 'a token balance');
  }

  /** The fee terms of a transfer: the node's gas estimate (or the planner's fixed `gasLimit`) at twice the gas price. */
  async feePlan(from: string, to: string, data?: Hex, gasLimit?: bigint): Promise<EvmFeePlan> {
    const [gasPrice, tip, gas] = await Promise.all([
      this.rpc('eth_gasPrice', []).then((v) => quantity(v, 'a gas price')),
      this.rpc('eth_maxPriorityFeePerGas', []).then((v) => quantity(v, 'a priority fee')),
      gasLimit ?? this.rpc('eth_estimateGas', [{ from, to, ...(data ? { data } : {}) }]).then((v) => quantity(v, 'a gas estimate')),
    ]);
    const maxFeePerGas = gasPrice * 2n;
    return { gas, maxFeePerGas, maxPriorityFeePerGas: tip < maxFeePerGas ? tip : maxFeePerGas, maxNetworkFee: gas * maxFeePerGas };
  }

  async nextNonce(address: string): Promise<number> {
    return Number(quantity(await this.rpc('eth_getTransactionCount', [address, 'pending']), 'a nonce'));
  }

  /** Signs `call` from a deposit address at its next nonce (a memo without calldata as the calldata), fees from the call or the node; nothing is sent. */
  async sign(from: DepositKeyRef, call: TransferCall, plan?: EvmFeePlan): Promise<SignedTransfer> {
    if (call.fees !== undefined && !isEvmFeePlan(call.fees)) throw new Error('the fee terms of an EVM transfer need gas and fee caps');
    const data = (call.data as Hex | undefined) ?? (call.memo !== undefined ? memoCalldata(call.memo) : undefined);
    const fees = plan ?? (isEvmFeePlan(call.fees) ? call.fees : await this.feePlan(from.address, call.to, data, call.gasLimit));
    const nonce = call.nonce ?? (await this.nextNonce(from.address));
    const { raw, hash } = await signEvmTransaction(this.signer, from, { chainId: this.origin.chainId, nonce, to: call.to, value: call.value, data, ...fees });
    return { raw, hash, nonce };
  }

  /**
   * Broadcasts a signed transaction. A node that already has it (in its pool, or mined: `already
   * known`, `nonce too low` for a hash it knows) has taken it: `known`. A `nonce too low` for a
   * hash the node does not know means another transaction took the nonce: `replaced`.
   */
  async broadcast(raw: string, hash: string): Promise<'accepted' | 'known' | 'replaced'> {
    try {
      const answered = await this.rpc('eth_sendRawTransaction', [raw]);
      if (typeof answered !== 'string' || answered.toLowerCase() !== hash.toLowerCase()) throw new Error(`the origin named the transaction ${String(answered)}, not ${hash}`);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof OriginError) || err.kind !== 'rpc') throw err;
      const message = err.rpcError?.message ?? '';
      if (/already known|known transaction/i.test(message)) return 'known';
      if (/nonce too low/i.test(message)) return (await this.rpc('eth_getTransactionByHash', [hash])) ? 'known' : 'replaced';
      throw err;
    }
  }

  async receipt(hash: string): Promise<TransferReceipt> {
    const [receipt, head] = await Promise.all([this.rpc('eth_getTransactionReceipt', [hash]), this.rpc('eth_blockNumber', [])]);
    if (!receipt) return { mined: false };
    const r = receipt as { status?: string; blockNumber?: string };
    const block = Number(quantity(r.blockNumber, 'a block number'));
    return { mined: true, success: r.status === '0x1', blockNumber: block, confirmations: Number(quantity(head, 'a block number')) - block + 1 };
  }

  /** Signs and broadcasts `value` (and calldata) from a deposit address; the transaction hash. */
  async send(from: DepositKeyRef, to: string, value: bigint, plan: EvmFeePlan, data?: Hex): Promise<Hex> {
    const { raw, hash } = await this.sign(from, { to, value, data }, plan);
    const outcome = await this.broadcast(raw, hash);
    if (outcome === 'replaced') throw new Error(`the nonce of ${hash} was taken by another transaction`);
    return hash as Hex;
  }
}
