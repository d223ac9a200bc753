import { emptyTx } from '../record-base';
import type { ChainContext, FromDetail, NormalizedTx, ToDetail } from '../types';
import type { TxPlacement, UtxoOutput, UtxoTx } from './model';

function sumOrNull(values: (bigint | null)[]): bigint | null {
  let total = 0n;
  for (const v of values) {
    if (v === null) return null;
    total += v;
  }
  return total;
}

/**
 * Fee = Σ inputs − Σ outputs when every input value is known (Blockbook, verbosity 3); otherwise
 * the source's own fee field (Core verbosity 2 `fee`), else null. A coinbase pays no fee: "0",
 * which is also what Blockbook reports for it. A negative difference means corrupt input data,
 * so it falls back like an unknown one.
 */
function txFee(tx: UtxoTx): bigint | null {
  if (tx.coinbase) return 0n;
  if (tx.inputs.length > 0) {
    const spent = sumOrNull(tx.inputs.map((i) => i.amount));
    const created = sumOrNull(tx.outputs.map((o) => o.amount));
    if (spent !== null && created !== null && spent >= created) return spent - created;
  }
  return tx.reportedFee;
}

/**
 * The outputs that leave the sender. With input addresses known, outputs back to any input
 * address are change and excluded; with them unknown (verbosity 2) nothing can be excluded, so
 * this is every output, i.e. the total output. Address-less outputs without value (OP_RETURN
 * data) move nothing and are left out; address-less outputs with value (bare multisig, burn)
 * count. If nothing remains the transaction pays only itself (consolidation): all outputs.
 */
function outgoingOutputs(tx: UtxoTx, inputAddresses: Set<string>): UtxoOutput[] {
  const outgoing = tx.outputs.filter((o) =>
    o.address === null ? o.amount !== 0n : !inputAddresses.has(o.address),
  );
  return outgoing.length > 0 ? outgoing : tx.outputs;
}

/**
 * Top-level summary rules:
 * - sender: address of the first input whose address is known; null for a coinbase and when
 *   prevouts are not resolved (Core verbosity 2);
 * - receiver: first addressed output among the outgoing ones (see `outgoingOutputs`), else the
 *   first addressed output at all (a pure self-transfer names the sender's own address);
 * - amount: Σ of the outgoing outputs (total output when inputs are unknown or for a coinbase);
 * - transfer_type: `system` for a coinbase (newly minted coins), `native` otherwise.
 */
export function buildRecord(tx: UtxoTx, place: TxPlacement, ctx: ChainContext): NormalizedTx {
  const inputAddresses = new Set<string>();
  for (const input of tx.inputs) if (input.address !== null) inputAddresses.add(input.address);
  const outgoing = outgoingOutputs(tx, inputAddresses);
  const receiver =
    outgoing.find((o) => o.address !== null)?.address ??
    tx.outputs.find((o) => o.address !== null)?.address ??
    null;
  const amount = sumOrNull(outgoing.map((o) => o.amount));
  const fee = txFee(tx);

  const fromDetails: FromDetail[] = tx.inputs.map((input, i) => ({
    address: input.address,
    amount: input.amount === null ? null : input.amount.toString(),
    vin_index: String(i),
    pre_vout_index: input.prevVout === null ? null : String(input.prevVout),
    ref_tx_hash: input.prevTxid,
    is_contract: false,
  }));
  const toDetails: ToDetail[] = tx.outputs.map((output) => ({
    address: output.address,
    amount: output.amount === null ? null : output.amount.toString(),
    vout_index: String(output.index),
    is_contract: false,
  }));

  return {
    ...emptyTx(ctx, tx.txid),
    height: place.height,
    block_hash: place.blockHash,
    tx_time: place.time,
    tx_index: place.txIndex,
    tx_version: tx.version,
    sender: tx.inputs.find((i) => i.address !== null)?.address ?? null,
    receiver,
    transfer_type: tx.coinbase ? 'system' : 'native',
    amount: amount === null ? null : amount.toString(),
    tx_status: place.status,
    tx_fee: fee === null ? null : fee.toString(),
    from_details: fromDetails,
    to_details: toDetails,
  };
}
