import { wrappedNativeTokens } from '@chainpipe/chains';
import type { ChainContext, InternalTransaction } from '../types';
import { address, firstWord, hash32, isObject, quantity, safeInt, topicAddress } from './hex';

type Json = any;

/** OP-stack deposit transaction type (0x7e). */
export const OP_DEPOSIT_TYPE = 0x7en;
/** Arbitrum ArbOS internal transaction type (0x6a): chain bookkeeping, never user-signed. */
const ARBITRUM_INTERNAL_TYPE = 0x6an;
/** Sender and target of the OP-stack L1-attributes deposit that opens every L2 block. */
const OP_L1_INFO_DEPOSITOR = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';
const OP_L1_BLOCK = '0x4200000000000000000000000000000000000015';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** BSC genesis system contracts (ValidatorSet 0x…1000, SlashIndicator 0x…1001, StakeHub 0x…2002…). */
const BSC_SYSTEM_CONTRACT = /^0x0{36}[123]0[0-9a-f]{2}$/;

export interface TxFacts {
  type: bigint | null;
  from: string | null;
  to: string | null;
  /** Gas price as far as it is known (effective price, else the tx's gasPrice). */
  gasPrice: bigint | null;
  /** The block's miner / coinbase, when a block header is known. */
  miner: string | null;
  /** OP-stack `isSystemTx` from the transaction, when present. */
  isSystemTx: boolean;
}

/**
 * Chain-internal transactions, recorded as transfer_type `system`:
 * - OP-stack deposits flagged `isSystemTx` (pre-Regolith) or the L1-attributes deposit
 *   (0xdead…0001 → L1Block 0x4200…0015), which after Regolith is no longer flagged;
 * - Arbitrum internal transactions (type 0x6a);
 * - BSC validator transactions: the miner calling a system contract at gas price 0 (the block
 *   reward `deposit` to ValidatorSet, slashing). Users may call some system contracts too, but
 *   never at gas price 0, so the price must be known to be zero;
 * - Polygon PoS (Bor) state-sync pseudo-transactions, which come from and go to the zero address.
 */
export function isSystemTransaction(f: TxFacts): boolean {
  if (f.type === OP_DEPOSIT_TYPE && (f.isSystemTx || (f.from === OP_L1_INFO_DEPOSITOR && f.to === OP_L1_BLOCK))) return true;
  if (f.type === ARBITRUM_INTERNAL_TYPE) return true;
  if (f.gasPrice === 0n && f.to !== null && BSC_SYSTEM_CONTRACT.test(f.to) && (f.miner === null || f.from === f.miner)) return true;
  if (f.from === ZERO_ADDRESS && f.to === ZERO_ADDRESS) return true;
  return false;
}

/**
 * The L1 origin of an L2 transaction: an explicit `l1OriginHash` when a chain provides one, else
 * for OP-stack deposits the `sourceHash`. The sourceHash is not an L1 transaction hash: it is
 * derived from the L1 block hash and the deposit log index (user deposits) or sequence number
 * (L1-info deposits), and is what uniquely ties the deposit to its L1 origin.
 */
export function l1OriginHash(tx: Json | null, type: bigint | null): string | null {
  if (tx === null) return null;
  const explicit = hash32(tx.l1OriginHash);
  if (explicit !== null) return explicit;
  return type === OP_DEPOSIT_TYPE ? hash32(tx.sourceHash) : null;
}

/** ETH an OP-stack deposit mints to its sender on L2 (kept even when the deposit reverts). */
export function depositMint(tx: Json | null, type: bigint | null): bigint | null {
  if (tx === null || type !== OP_DEPOSIT_TYPE) return null;
  const mint = quantity(tx.mint);
  return mint !== null && mint > 0n ? mint : null;
}

/**
 * Fee components a receipt reports on top of `gasUsed × price`: the OP-stack L1 data fee
 * (`l1Fee`) and the EIP-4844 blob fee (`blobGasUsed × blobGasPrice`). Arbitrum folds its L1
 * cost into `gasUsed` (`gasUsedForL1` is a part of it), so nothing is added there.
 */
export function extraReceiptFees(receipt: Json | null): bigint {
  if (receipt === null) return 0n;
  let extra = quantity(receipt.l1Fee) ?? 0n;
  const blobGas = quantity(receipt.blobGasUsed);
  const blobPrice = quantity(receipt.blobGasPrice);
  if (blobGas !== null && blobPrice !== null) extra += blobGas * blobPrice;
  return extra;
}

export function minerOf(block: Json | null): string | null {
  if (block === null) return null;
  return address(block.miner) ?? address(block.author);
}

/** What of a chain's own conventions the record builder needs, worked out once per payload. */
export interface EvmChainRules {
  /** The chain's wrapped native coin contracts (`Deposit` / `Withdrawal` are transfers). */
  wrappedNative: ReadonlySet<string>;
  /** Polygon PoS: native POL moves are also announced as logs of the system contract 0x…1010. */
  nativeTransferLogs: boolean;
}

export function evmChainRules(ctx: Pick<ChainContext, 'chainType' | 'chainId'>): EvmChainRules {
  return {
    wrappedNative: new Set(wrappedNativeTokens(ctx.chainType, ctx.chainId)),
    nativeTransferLogs: ctx.chainType === 'polygon',
  };
}

/** Polygon PoS system contract of the native coin (MRC20), which logs every POL move. */
const POLYGON_NATIVE_CONTRACT = '0x0000000000000000000000000000000000001010';
/** keccak256("LogTransfer(address,address,address,uint256,uint256,uint256,uint256,uint256)"). */
export const LOG_TRANSFER_TOPIC = '0xe6497e3ee548a3372136af2fcb0696db31fc6cf20260707645068bd3fe97f3c4';
/** keccak256("LogFeeTransfer(address,address,address,uint256,uint256,uint256,uint256,uint256)"). */
export const LOG_FEE_TRANSFER_TOPIC = '0x4dfe1bbbcf077ddc3e01291eea2d5c70c2b422b415d95645b9adcfd678cb1d63';

/** The top-level value a transaction carried, which Bor also logs as a LogTransfer. */
export interface TopLevelMove {
  from: string | null;
  to: string | null;
  value: bigint | null;
}

/**
 * Native POL moves of a Polygon PoS receipt, from the 0x…1010 contract's
 * `LogTransfer(token, from, to, amount, input1, input2, output1, output2)` and `LogFeeTransfer`
 * (same layout: the fee paid to the block producer). Only meant for deliveries without traces:
 * with traces the moves are the transaction's value and its call frames. Bor logs the
 * transaction's own top-level value too; the first log equal to it (`top`) is that value, already
 * the record's `sender → receiver, amount`, and is not listed again.
 */
export function polygonNativeTransfers(logs: unknown, top: TopLevelMove | null): InternalTransaction[] {
  if (!Array.isArray(logs)) return [];
  const out: InternalTransaction[] = [];
  let topSeen = top === null || top.value === null || top.value === 0n;
  for (let i = 0; i < logs.length; i++) {
    const log: Json = logs[i];
    if (!isObject(log) || log.removed === true || address(log.address) !== POLYGON_NATIVE_CONTRACT) continue;
    const topics = log.topics;
    if (!Array.isArray(topics) || topics.length !== 4) continue;
    const topic0 = hash32(topics[0]);
    const fee = topic0 === LOG_FEE_TRANSFER_TOPIC;
    if (!fee && topic0 !== LOG_TRANSFER_TOPIC) continue;
    const from = topicAddress(topics[2]);
    const to = topicAddress(topics[3]);
    const amount = firstWord(log.data);
    if (from === null || to === null || amount === null || amount === 0n) continue;
    if (!fee && !topSeen && top !== null && from === top.from && to === top.to && amount === top.value) {
      topSeen = true;
      continue;
    }
    out.push({
      from_address: from,
      to_address: to,
      amount: amount.toString(),
      tx_status: 'success',
      program_id: POLYGON_NATIVE_CONTRACT,
      instruction: fee ? 'fee_transfer' : 'log_transfer',
      description: fee ? 'Polygon LogFeeTransfer: fee paid to the block producer' : 'Polygon LogTransfer: native POL moved',
      instr_index: safeInt(log.logIndex) ?? i,
      depth: null,
    });
  }
  return out;
}
