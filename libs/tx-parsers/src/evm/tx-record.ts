import type { ChainContext, InternalTransaction, NormalizedTx, TransferType, TxStatus } from '../types';
import { depositMint, extraReceiptFees, isSystemTransaction, l1OriginHash, polygonNativeTransfers, type EvmChainRules } from './chain-specific';
import { address, hash32, methodId, quantity, quantityString, safeInt } from './hex';
import { tokenTransfersFromLogs } from './token-transfers';
import type { TraceSummary } from './traces';

type Json = any;

/** Block-level facts shared by the block's records. */
export interface BlockInfo {
  height: number | null;
  hash: string | null;
  time: number | null;
  miner: string | null;
  baseFee: bigint | null;
}

/** Everything known about one transaction: any of the three sources may be missing. */
export interface TxSources {
  hash: string;
  index: number | null;
  tx: Json | null;
  receipt: Json | null;
  trace: TraceSummary | null;
}

function receiptStatus(v: unknown): TxStatus | null {
  const q = quantity(v);
  if (q === 1n) return 'success';
  if (q === 0n) return 'failed';
  return null;
}

/**
 * Status, most authoritative source first: the receipt's `status` (Byzantium+); else the trace's
 * top frame; else a transaction included in a block counts as `success`, since nothing says
 * otherwise (this includes pre-Byzantium receipts without traces: an out-of-gas failure is then
 * not detectable). A transaction object that is not in a block yet is `pending`.
 */
function statusOf(s: TxSources): TxStatus | null {
  const fromReceipt = s.receipt ? receiptStatus(s.receipt.status) : null;
  if (fromReceipt) return fromReceipt;
  if (s.trace && s.trace.kind !== null) return s.trace.failed ? 'failed' : 'success';
  if (s.receipt) return 'success';
  if (s.tx) return s.tx.blockHash === null && s.tx.blockNumber === null ? 'pending' : 'success';
  return null;
}

/**
 * The price actually paid per gas: the receipt's `effectiveGasPrice`; else the transaction's
 * `gasPrice` (nodes report the effective price for mined EIP-1559 transactions); else, for an
 * EIP-1559 transaction, min(maxFee, baseFee + maxPriorityFee) from the block's base fee.
 */
function effectivePrice(tx: Json | null, receipt: Json | null, baseFee: bigint | null): bigint | null {
  const fromReceipt = receipt ? quantity(receipt.effectiveGasPrice) : null;
  if (fromReceipt !== null) return fromReceipt;
  if (tx === null) return null;
  const gasPrice = quantity(tx.gasPrice);
  if (gasPrice !== null) return gasPrice;
  const maxFee = quantity(tx.maxFeePerGas);
  const tip = quantity(tx.maxPriorityFeePerGas);
  if (maxFee === null || tip === null || baseFee === null) return null;
  return baseFee + tip < maxFee ? baseFee + tip : maxFee;
}

function isCreation(s: TxSources): boolean {
  if (s.tx) return s.tx.to === null || s.tx.to === undefined;
  if (s.receipt) return (s.receipt.to === null || s.receipt.to === undefined) && address(s.receipt.contractAddress) !== null;
  return s.trace?.kind === 'create' || s.trace?.kind === 'create2';
}

function transferTypeOf(system: boolean, creation: boolean, tokenCount: number, amount: bigint | null): TransferType | null {
  if (system) return 'system';
  if (creation) return 'contract_creation';
  if (tokenCount > 0) return 'token';
  if (amount === null) return null;
  return amount > 0n ? 'native' : 'contract_call';
}

function mintEntry(to: string | null, mint: bigint): InternalTransaction {
  return {
    from_address: null,
    to_address: to,
    amount: mint.toString(),
    tx_status: 'success',
    program_id: null,
    instruction: 'mint',
    description: 'OP-stack deposit: ETH minted on L2 to the sender and not passed on as the deposit value',
    instr_index: null,
    depth: 0,
  };
}

/**
 * The part of an OP-stack deposit's `mint` to list as its own credit. The minted ETH lands on the
 * sender, and the deposit's `value` then moves from the sender to the receiver, which the
 * record's top level already shows: listing the whole mint as well would credit the same ETH
 * twice (a deposit to oneself with mint = value is the common case). So only what stays with the
 * sender (mint − value) is listed; a reverted deposit moved no value and keeps the whole mint.
 */
function mintKeptBySender(mint: bigint, value: bigint | null, status: TxStatus | null): bigint {
  if (status === 'failed' || value === null) return mint;
  return mint > value ? mint - value : 0n;
}

/** The normalized record of one transaction from whatever sources matched it. */
export function buildRecord(ctx: ChainContext, rules: EvmChainRules, block: BlockInfo, s: TxSources): NormalizedTx {
  const { tx, receipt, trace } = s;
  const type = quantity(tx?.type ?? receipt?.type);
  const sender = address(tx?.from) ?? address(receipt?.from) ?? trace?.from ?? null;
  const creation = isCreation(s);
  const receiver = creation
    ? (address(receipt?.contractAddress) ?? address(tx?.creates) ?? (trace && trace.kind?.startsWith('create') ? trace.to : null))
    : (address(tx ? tx.to : receipt ? receipt.to : trace?.to));
  const amount = tx ? quantity(tx.value) : (trace?.kind != null ? trace.value : null);
  const status = statusOf(s);

  const gasUsed = receipt ? quantity(receipt.gasUsed) : null;
  const price = effectivePrice(tx, receipt, block.baseFee);
  const fee = gasUsed !== null && price !== null ? gasUsed * price + extraReceiptFees(receipt) : null;

  const system = isSystemTransaction({
    type,
    from: sender,
    to: creation ? null : receiver,
    gasPrice: price,
    miner: block.miner,
    isSystemTx: tx?.isSystemTx === true,
  });

  // A reverted transaction moved no tokens and no internal value, whatever its logs or frames say.
  const moved = status !== 'failed';
  const tokenTransfers = moved && receipt ? tokenTransfersFromLogs(receipt.logs, rules.wrappedNative) : [];
  const internals: InternalTransaction[] = [];
  const mint = depositMint(tx, type);
  const minted = mint === null ? 0n : mintKeptBySender(mint, amount, status);
  if (minted > 0n) internals.push(mintEntry(sender, minted));
  if (moved && trace) internals.push(...trace.internals);
  else if (moved && receipt && rules.nativeTransferLogs) {
    internals.push(...polygonNativeTransfers(receipt.logs, tx ? { from: sender, to: receiver, value: amount } : null));
  }

  const hasReceiptOrTx = tx !== null || receipt !== null;
  return {
    chain_type: ctx.chainType,
    chain_id: ctx.chainId,
    height: block.height ?? safeInt(tx?.blockNumber) ?? safeInt(receipt?.blockNumber),
    block_hash: block.hash ?? hash32(tx?.blockHash) ?? hash32(receipt?.blockHash),
    tx_time: block.time,
    tx_hash: s.hash,
    tx_index: s.index,
    tx_version: type !== null && type <= 0xffn ? Number(type) : null,
    sender,
    receiver,
    fee_payer: null,
    transfer_type: hasReceiptOrTx || trace?.kind != null ? transferTypeOf(system, creation, tokenTransfers.length, amount) : null,
    amount: amount === null ? null : amount.toString(),
    symbol: ctx.nativeSymbol ?? null,
    decimals: ctx.nativeDecimals ?? null,
    tx_status: status,
    tx_fee: fee === null ? null : fee.toString(),
    gas_limit: quantityString(tx?.gas),
    gas_used: gasUsed === null ? null : gasUsed.toString(),
    gas_price: price === null ? null : price.toString(),
    max_fee_per_gas: quantityString(tx?.maxFeePerGas),
    max_priority_fee_per_gas: quantityString(tx?.maxPriorityFeePerGas),
    nonce: quantityString(tx?.nonce),
    method_id: creation || !tx ? null : methodId(tx.input ?? tx.data),
    method_call: null,
    l1_origin_hash: l1OriginHash(tx, type),
    token_transfers: tokenTransfers,
    from_details: [],
    to_details: [],
    internal_transactions: internals,
  };
}
