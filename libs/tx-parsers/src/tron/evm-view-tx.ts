import type { ChainContext } from '../types';
import { toTronAddress } from './address';
import { asObject, asString, multiplyDecimal, normalizeHash, toDecimal, toSafeInt } from './json';
import { emptyRecord, statusFromReceipt, type BlockFacts } from './record';
import { methodIdOf, transferFromCallData, transfersFromLogs } from './token-transfers';
import type { TxOutcome } from './tx-outcome';

/**
 * A transaction of Tron's eth-compatible JSON-RPC view (object, or bare hash when the block was
 * fetched without full transactions) plus its receipt → record. The view hides the Tron contract
 * type, so the record is typed like an EVM one: logs → token, value → native, else contract call.
 * It also exposes no call data for many calls (`input: "0x"`), so without a receipt a TRC-20
 * transfer is only found when the input is there.
 */
export function parseEvmViewTx(
  raw: unknown,
  index: number,
  block: BlockFacts,
  receiptFor: (txHash: string) => Record<string, unknown> | undefined,
  ctx: ChainContext,
): TxOutcome {
  const tx = asObject(raw);
  const txHash = normalizeHash(tx ? tx.hash : raw);
  if (!txHash) return { ok: false, txHash: null, reason: 'transaction has no valid hash' };
  const receipt = receiptFor(txHash);
  if (!tx && !receipt) {
    return { ok: false, txHash, reason: 'block lists only the transaction hash and no receipt was delivered' };
  }

  const rec = emptyRecord(ctx, block, txHash, toSafeInt(tx?.transactionIndex ?? receipt?.transactionIndex) ?? index);
  rec.sender = toTronAddress(tx?.from ?? receipt?.from);
  const to = tx ? tx.to : receipt?.to;
  const created = toTronAddress(receipt?.contractAddress);
  const isCreation = (to === null || to === undefined) && (created !== null || (tx !== undefined && 'to' in tx));
  rec.receiver = isCreation ? created : toTronAddress(to);
  rec.amount = tx ? toDecimal(tx.value) : null;
  rec.tx_status = statusFromReceipt(receipt);
  rec.gas_limit = toDecimal(tx?.gas);
  rec.gas_used = toDecimal(receipt?.gasUsed);
  rec.gas_price = toDecimal(receipt?.effectiveGasPrice) ?? toDecimal(tx?.gasPrice);
  // Energy cost only (bandwidth is not in the view): an approximation of the burnt TRX.
  rec.tx_fee = receipt ? multiplyDecimal(rec.gas_used, rec.gas_price) : null;
  rec.nonce = toDecimal(tx?.nonce);
  const input = asString(tx?.input);
  rec.method_id = methodIdOf(input);

  if (rec.tx_status !== 'failed') {
    if (receipt) rec.token_transfers = transfersFromLogs(receipt.logs);
    else {
      const guessed = transferFromCallData(input, rec.sender, rec.receiver);
      if (guessed) rec.token_transfers = [guessed];
    }
  }
  if (isCreation) rec.transfer_type = 'contract_creation';
  else if (rec.token_transfers.length > 0) rec.transfer_type = 'token';
  else if (rec.amount !== null && rec.amount !== '0') rec.transfer_type = 'native';
  else rec.transfer_type = 'contract_call';
  return { ok: true, record: rec };
}
