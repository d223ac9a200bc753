import type { ChainContext, NormalizedTx, TxStatus } from '../types';
import type { UtxoTx } from './model';
import { buildRecord } from './record';

/** An output as stored in a record's `to_details`. */
export interface KnownOutput {
  address: string | null;
  amount: string | null;
}

/** Stored outputs by `txid:vout`. */
export type KnownOutputs = ReadonlyMap<string, KnownOutput>;

export const outputKey = (txid: string, vout: number | string): string => `${txid}:${vout}`;

const DIGITS = /^\d{1,30}$/;

function needsInputs(tx: NormalizedTx): boolean {
  return tx.chain_type === 'bitcoin' && tx.from_details.some((d) => d.amount === null && d.ref_tx_hash !== null && d.pre_vout_index !== null);
}

/** The previous transactions whose outputs would complete these records' inputs. */
export function unresolvedPrevTxids(txs: readonly NormalizedTx[]): string[] {
  const out = new Set<string>();
  for (const tx of txs) {
    if (!needsInputs(tx)) continue;
    for (const d of tx.from_details) if (d.amount === null && d.ref_tx_hash !== null) out.add(d.ref_tx_hash);
  }
  return [...out];
}

/** The record's own view as the record builder takes it. */
function utxoTxOf(tx: NormalizedTx, known: (txid: string, vout: string) => KnownOutput | undefined): UtxoTx {
  return {
    txid: tx.tx_hash,
    version: tx.tx_version,
    coinbase: tx.transfer_type === 'system' && tx.from_details.length === 0,
    inputs: tx.from_details.map((d) => {
      const found = d.amount === null && d.ref_tx_hash !== null && d.pre_vout_index !== null ? known(d.ref_tx_hash, d.pre_vout_index) : undefined;
      const amount = found ? found.amount : d.amount;
      return {
        address: found ? found.address : d.address,
        amount: amount !== null && DIGITS.test(amount) ? BigInt(amount) : null,
        prevTxid: d.ref_tx_hash,
        prevVout: d.pre_vout_index === null ? null : Number(d.pre_vout_index),
      };
    }),
    outputs: tx.to_details.map((d, i) => ({
      address: d.address,
      amount: d.amount !== null && DIGITS.test(d.amount) ? BigInt(d.amount) : null,
      index: d.vout_index === null ? i : Number(d.vout_index),
    })),
    // A fee the source stated stays the fallback; complete inputs replace it with Σin − Σout.
    reportedFee: tx.tx_fee !== null && DIGITS.test(tx.tx_fee) ? BigInt(tx.tx_fee) : null,
  };
}

/**
 * Bitcoin records whose inputs name only the spent outpoint (raw data, Core verbosity 2) get
 * the spent output's address and value where it is known: from `stored` outputs, or from an
 * earlier transaction of the same list (a spend inside the block). With every input known the
 * fee becomes Σ inputs − Σ outputs and sender, receiver and amount follow the usual rules; an
 * input still unknown leaves the fee as it was (unknown rather than guessed). Records that need
 * nothing are returned as they are.
 */
export function resolveInputs(txs: readonly NormalizedTx[], stored: KnownOutputs): NormalizedTx[] {
  const own = new Map<string, KnownOutput>();
  const known = (txid: string, vout: string) => own.get(outputKey(txid, vout)) ?? stored.get(outputKey(txid, vout));
  return txs.map((tx) => {
    let result = tx;
    if (needsInputs(tx)) {
      const ctx: ChainContext = { chainType: tx.chain_type, chainId: tx.chain_id, family: 'utxo', nativeSymbol: tx.symbol ?? 'BTC', nativeDecimals: tx.decimals ?? 8 };
      const status: TxStatus = tx.tx_status ?? 'success';
      result = buildRecord(utxoTxOf(tx, known), { height: tx.height, blockHash: tx.block_hash, time: tx.tx_time, txIndex: tx.tx_index, status }, ctx);
    }
    for (const d of result.to_details) {
      if (d.vout_index !== null) own.set(outputKey(result.tx_hash, d.vout_index), { address: d.address, amount: d.amount });
    }
    return result;
  });
}
