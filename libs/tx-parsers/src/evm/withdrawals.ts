import { keccak256 } from 'js-sha3';
import { emptyTx } from '../record-base';
import type { ChainContext, NormalizedTx } from '../types';
import { address, hash32, isObject, quantity } from './hex';

type Json = any;

const GWEI = 1_000_000_000n;
/** Domain tag of the synthetic hash, so it cannot equal the keccak of any transaction's bytes by design. */
const DOMAIN = Buffer.from('chainpipe:eip4895-withdrawal:v1', 'utf8');

/**
 * The stable id of a beacon-chain withdrawal record: keccak256(tag ‖ block hash ‖ withdrawal
 * index as uint64 big-endian), `0x`-hex like a transaction hash. It depends only on the block
 * and the withdrawal's global index, so a replay of the block yields the same record, and a
 * reorg (another block hash) yields a new one while the old one is orphaned with its block.
 */
export function withdrawalRecordHash(blockHash: string, index: bigint): string {
  return withdrawalHasher(blockHash)(index);
}

/**
 * The hash above for many withdrawals of one block: tag and block hash are written once, each
 * withdrawal only writes its index. keccak-256 comes from js-sha3, about three times faster than
 * @noble/hashes' here, which made the hashing most of what a block's withdrawals cost to parse
 * (the tests check the result against @noble/hashes).
 */
function withdrawalHasher(blockHash: string): (index: bigint) => string {
  const buf = Buffer.alloc(DOMAIN.length + 32 + 8);
  DOMAIN.copy(buf, 0);
  if (!/^0x[0-9a-fA-F]{64}$/.test(blockHash) || buf.write(blockHash.slice(2), DOMAIN.length, 32, 'hex') !== 32) {
    throw new Error(`not a 32-byte block hash: ${blockHash.slice(0, 80)}`);
  }
  return (index) => {
    buf.writeBigUInt64BE(index, DOMAIN.length + 32);
    return '0x' + keccak256(buf);
  };
}

export interface WithdrawalBlock {
  height: number | null;
  hash: string | null;
  time: number | null;
}

type Report = (txHash: string | null, txIndex: number | null, reason: string) => void;

const MAX_UINT64 = (1n << 64n) - 1n;

/**
 * EIP-4895 withdrawals of a post-Shanghai block: each credits `amount` gwei to `address` without
 * a transaction. Each becomes a `system` record with the synthetic hash above, no sender, the
 * address as receiver, the amount in wei, fee 0 and one internal entry naming the withdrawal
 * (`instruction` `beacon_withdrawal`, `instr_index` = withdrawal index), so search by the
 * address and matching find it like any credit. Zero-amount withdrawals move nothing and are
 * skipped; a block without a hash cannot give stable ids, so its withdrawals are reported.
 */
export function withdrawalRecords(ctx: ChainContext, block: Json, info: WithdrawalBlock, report: Report): NormalizedTx[] {
  const list = isObject(block) ? block.withdrawals : undefined;
  if (!Array.isArray(list) || list.length === 0) return [];
  const blockHash = hash32(info.hash);
  if (blockHash === null) {
    report(null, null, 'block has withdrawals but no hash: withdrawals not recorded');
    return [];
  }
  const out: NormalizedTx[] = [];
  const seen = new Set<bigint>();
  const hashOf = withdrawalHasher(blockHash);
  list.forEach((w: Json, position: number) => {
    const index = isObject(w) ? quantity(w.index) : null;
    const validator = isObject(w) ? quantity(w.validatorIndex) : null;
    const to = isObject(w) ? address(w.address) : null;
    const gwei = isObject(w) ? quantity(w.amount) : null;
    if (index === null || index > MAX_UINT64 || to === null || gwei === null || gwei > MAX_UINT64) {
      report(null, position, 'withdrawal without a valid index, address or amount');
      return;
    }
    if (seen.has(index)) {
      report(null, position, `duplicate withdrawal index ${index}`);
      return;
    }
    seen.add(index);
    if (gwei === 0n) return;
    const wei = (gwei * GWEI).toString();
    // Filled in place: emptyTx gives a fresh object, no need to copy its 30 fields into another.
    const record = emptyTx(ctx, hashOf(index));
    record.height = info.height;
    record.block_hash = blockHash;
    record.tx_time = info.time;
    record.receiver = to;
    record.transfer_type = 'system';
    record.amount = wei;
    record.tx_status = 'success';
    record.tx_fee = '0';
    record.internal_transactions.push({
      from_address: null,
      to_address: to,
      amount: wei,
      tx_status: 'success',
      program_id: null,
      instruction: 'beacon_withdrawal',
      description: `EIP-4895 withdrawal ${index} of validator ${validator ?? 'unknown'}`,
      instr_index: index <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(index) : null,
      depth: 0,
    });
    out.push(record);
  });
  return out;
}
