import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { emptyTx } from '../record-base';
import type { ChainContext, NormalizedTx } from '../types';
import { address, hash32, isObject, quantity } from './hex';

type Json = any;

const GWEI = 1_000_000_000n;
/** Domain tag of the synthetic hash, so it cannot equal the keccak of any transaction's bytes by design. */
const DOMAIN = new TextEncoder().encode('chainpipe:eip4895-withdrawal:v1');

/**
 * The stable id of a beacon-chain withdrawal record: keccak256(tag ‖ block hash ‖ withdrawal
 * index as uint64 big-endian), `0x`-hex like a transaction hash. It depends only on the block
 * and the withdrawal's global index, so a replay of the block yields the same record, and a
 * reorg (another block hash) yields a new one while the old one is orphaned with its block.
 */
export function withdrawalRecordHash(blockHash: string, index: bigint): string {
  const buf = new Uint8Array(DOMAIN.length + 32 + 8);
  buf.set(DOMAIN, 0);
  buf.set(hexToBytes(blockHash.slice(2)), DOMAIN.length);
  new DataView(buf.buffer).setBigUint64(DOMAIN.length + 32, index, false);
  return '0x' + bytesToHex(keccak_256(buf));
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
    out.push({
      ...emptyTx(ctx, withdrawalRecordHash(blockHash, index)),
      height: info.height,
      block_hash: blockHash,
      tx_time: info.time,
      receiver: to,
      transfer_type: 'system',
      amount: wei,
      tx_status: 'success',
      tx_fee: '0',
      internal_transactions: [
        {
          from_address: null,
          to_address: to,
          amount: wei,
          tx_status: 'success',
          program_id: null,
          instruction: 'beacon_withdrawal',
          description: `EIP-4895 withdrawal ${index} of validator ${validator ?? 'unknown'}`,
          instr_index: index <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(index) : null,
          depth: 0,
        },
      ],
    });
  });
  return out;
}
