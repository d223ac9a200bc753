import { address, hash32, quantity } from './hex';

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
