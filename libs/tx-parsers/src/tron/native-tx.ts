import type { ChainContext, NormalizedTx, TokenTransfer, TxStatus } from '../types';
import { toTronAddress } from './address';
import {
  asArray,
  asObject,
  asString,
  multiplyDecimal,
  normalizeHash,
  toDecimal,
  type JsonObject,
} from './json';
import { emptyRecord, firstRet, statusFromInfo, statusFromReceipt, statusFromResultCode, type BlockFacts } from './record';
import {
  methodIdOf,
  transferFromCallData,
  transfersFromLogs,
  trc10AssetId,
  trc10Transfer,
} from './token-transfers';
import { tronInternalTransfers } from './internal-txs';
import type { ExtrasLookup, TxExtras, TxOutcome } from './tx-outcome';

/** Keys naming the other party of system contracts (delegation, account creation, votes…). */
const COUNTERPARTY_KEYS = ['to_address', 'receiver_address', 'account_address', 'contract_address'];

function contractType(contract: JsonObject): string | null {
  const type = asString(contract.type);
  if (type) return type;
  // Some encoders only keep the protobuf type URL.
  const url = asString(asObject(contract.parameter)?.type_url);
  return url ? url.slice(url.lastIndexOf('.') + 1) || null : null;
}

/**
 * Fee in sun: the info's `fee` (proto3 omits zero, so an info without it means a free
 * transaction), else the eth receipt's energy cost gasUsed × effectiveGasPrice (ignores the
 * bandwidth fee: an approximation), else `ret[0].fee` (TronGrid list items carry it).
 */
function feeOf(tx: JsonObject, extras: TxExtras): string | null {
  const { info, receipt, evmTx } = extras;
  if (info) return info.fee === undefined ? '0' : toDecimal(info.fee);
  const price = toDecimal(receipt?.effectiveGasPrice) ?? toDecimal(evmTx?.gasPrice);
  const evmFee = multiplyDecimal(toDecimal(receipt?.gasUsed), receipt ? price : null);
  if (evmFee !== null) return evmFee;
  return toDecimal(firstRet(tx)?.fee);
}

function statusOf(tx: JsonObject, extras: TxExtras): TxStatus | null {
  return (
    statusFromInfo(extras.info) ??
    statusFromReceipt(extras.receipt) ??
    statusFromResultCode(firstRet(tx)?.contractRet)
  );
}

/** Token movements of a VM call: logs when an execution result exists, else call data. */
function vmTransfers(value: JsonObject, extras: TxExtras, owner: string | null, contract: string | null): TokenTransfer[] {
  const out: TokenTransfer[] = [];
  const tokenValue = toDecimal(value.call_token_value);
  if (tokenValue !== null && tokenValue !== '0') {
    out.push(trc10Transfer(owner, contract, trc10AssetId(value.token_id), tokenValue));
  }
  if (extras.info) out.push(...transfersFromLogs(extras.info.log));
  else if (extras.receipt) out.push(...transfersFromLogs(extras.receipt.logs));
  else {
    const guessed = transferFromCallData(value.data, owner, contract);
    if (guessed) out.push(guessed);
  }
  return out;
}

function applyContract(rec: NormalizedTx, type: string | null, value: JsonObject, extras: TxExtras): void {
  const owner = rec.sender;
  const succeeded = rec.tx_status !== 'failed';
  switch (type) {
    case 'TransferContract':
      rec.receiver = toTronAddress(value.to_address);
      rec.amount = toDecimal(value.amount);
      rec.transfer_type = 'native';
      return;
    case 'TransferAssetContract': {
      rec.receiver = toTronAddress(value.to_address);
      rec.amount = '0';
      if (succeeded) {
        const id = trc10AssetId(value.asset_name);
        rec.token_transfers = [trc10Transfer(owner, rec.receiver, id, toDecimal(value.amount))];
      }
      rec.transfer_type = rec.token_transfers.length > 0 ? 'token' : 'contract_call';
      return;
    }
    case 'TriggerSmartContract': {
      rec.receiver = toTronAddress(value.contract_address);
      rec.amount = value.call_value === undefined ? '0' : toDecimal(value.call_value);
      rec.method_id = methodIdOf(value.data);
      if (succeeded) rec.token_transfers = vmTransfers(value, extras, owner, rec.receiver);
      if (rec.token_transfers.length > 0) rec.transfer_type = 'token';
      else rec.transfer_type = rec.amount !== null && rec.amount !== '0' ? 'native' : 'contract_call';
      return;
    }
    case 'CreateSmartContract': {
      const created = asObject(value.new_contract);
      rec.receiver =
        toTronAddress(extras.info?.contract_address) ??
        toTronAddress(extras.receipt?.contractAddress) ??
        toTronAddress(created?.contract_address);
      rec.amount = created?.call_value === undefined ? '0' : toDecimal(created.call_value);
      if (succeeded && extras.info) rec.token_transfers = transfersFromLogs(extras.info.log);
      else if (succeeded && extras.receipt) rec.token_transfers = transfersFromLogs(extras.receipt.logs);
      rec.transfer_type = 'contract_creation';
      return;
    }
    default: {
      // Staking, delegation, votes, account changes: no TRX moves to a counterparty, but the
      // record keeps the owner's (and the counterparty's) history complete.
      for (const key of COUNTERPARTY_KEYS) {
        const addr = toTronAddress(value[key]);
        if (addr) {
          rec.receiver = addr;
          break;
        }
      }
      rec.transfer_type = 'contract_call';
    }
  }
}

/**
 * A node-API transaction (`/wallet/getblockbynum`, TronGrid list item) → record. Tron
 * transactions hold exactly one contract; only the first is read.
 */
export function parseNativeTx(
  raw: unknown,
  index: number | null,
  block: BlockFacts,
  lookup: ExtrasLookup,
  ctx: ChainContext,
): TxOutcome {
  const tx = asObject(raw);
  if (!tx) return { ok: false, txHash: null, reason: 'transaction is not an object' };
  const txHash = normalizeHash(tx.txID);
  if (!txHash) return { ok: false, txHash: null, reason: 'transaction has no valid txID' };
  const rawData = asObject(tx.raw_data);
  const contract = asObject(asArray(rawData?.contract)[0]);
  if (!rawData || !contract) return { ok: false, txHash, reason: 'transaction has no contract' };

  const extras = lookup(txHash);
  const value = asObject(asObject(contract.parameter)?.value) ?? {};
  const rec = emptyRecord(ctx, block, txHash, index);
  rec.sender = toTronAddress(value.owner_address);
  rec.tx_status = statusOf(tx, extras);
  rec.tx_fee = feeOf(tx, extras);
  rec.gas_limit = toDecimal(rawData.fee_limit);
  rec.gas_used =
    toDecimal(asObject(extras.info?.receipt)?.energy_usage_total) ??
    toDecimal(extras.receipt?.gasUsed) ??
    toDecimal(tx.energy_usage_total);
  rec.gas_price = toDecimal(extras.receipt?.effectiveGasPrice) ?? toDecimal(extras.evmTx?.gasPrice);
  applyContract(rec, contractType(contract), value, extras);
  // A reverted transaction moved nothing through its contracts either.
  if (rec.tx_status !== 'failed') rec.internal_transactions = tronInternalTransfers(extras.info?.internal_transactions ?? tx.internal_transactions);
  return { ok: true, record: rec };
}
