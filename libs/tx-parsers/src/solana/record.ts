import type { ChainType } from '@chainpipe/chains';
import { emptyTx } from '../record-base';
import type { InternalTransaction, NormalizedTx, TransferType, TxStatus } from '../types';
import { accountKeys, tokenBalances } from './accounts';
import { type Instruction, flattenInstructions } from './instructions';
import { type JsonObject, asArray, asNonEmptyString, asObject, errorMessage, toBigInt, toDecimal, toSafeInt } from './json';
import { type NativeMove, type TokenMove, nativeMove, tokenMove } from './movements';
import { nativeFromBalanceDeltas, summarizeNativeMoves } from './native';
import { COMPUTE_BUDGET_PROGRAM, SYSTEM_PROGRAM, VOTE_PROGRAM } from './programs';
import { tokenTransfersFromBalances, tokenTransfersFromMoves } from './token-transfers';
import { decodeWireTransaction, wireForm } from './wire';

/** Chain identity and native unit, already checked by the caller. */
export interface RecordContext {
  chainType: ChainType;
  chainId: number;
  nativeSymbol: string;
  nativeDecimals: number;
}

/** Where the transaction was seen. */
export interface TxPlacement {
  slot: number | null;
  blockHash: string | null;
  blockTime: number | null;
  txIndex: number | null;
}

export type TxOutcome = { kind: 'record'; record: NormalizedTx } | { kind: 'vote' } | { kind: 'error'; reason: string };

/** `meta.err` null → success; any error value → failed (the fee is still charged). */
function txStatus(meta: JsonObject | null): TxStatus | null {
  if (!meta) return null;
  if (meta.err === null) return 'success';
  if (meta.err !== undefined) return 'failed';
  const status = asObject(meta.status);
  if (status && 'Err' in status) return 'failed';
  if (status && 'Ok' in status) return 'success';
  return null;
}

/** `version: "legacy"` (or no version: a node not asked for versioned txs) → null; v0 → 0. */
function txVersion(v: unknown): number | null {
  const n = toSafeInt(v);
  return n !== null && n >= 0 ? n : null;
}

/**
 * Votes are validator consensus traffic (most transactions of every block): a transaction whose
 * top-level instructions are all Vote program calls (ComputeBudget ones aside) is noise for
 * address monitoring and gets no record. A vote bundled with anything else is kept.
 */
function isVoteOnly(instructions: readonly Instruction[]): boolean {
  const outer = instructions.filter((ix) => ix.depth === 1 && ix.programId !== COMPUTE_BUDGET_PROGRAM);
  return outer.length > 0 && outer.every((ix) => ix.programId === VOTE_PROGRAM);
}

/**
 * The program a contract call is addressed to: the first top-level instruction that is not a
 * ComputeBudget setting nor the durable-nonce `advanceNonce` bookkeeping.
 */
function mainProgram(instructions: readonly Instruction[]): string | null {
  const outer = instructions.filter((ix) => ix.depth === 1);
  const main = outer.find(
    (ix) => ix.programId !== COMPUTE_BUDGET_PROGRAM && !(ix.programId === SYSTEM_PROGRAM && ix.type === 'advanceNonce'),
  );
  return (main ?? outer[0])?.programId ?? null;
}

function internalEntry(
  ix: Instruction,
  status: TxStatus | null,
  native: NativeMove | null,
  token: TokenMove | null,
): InternalTransaction {
  const move = native
    ? { from: native.from, to: native.to, amount: native.lamports.toString(), description: null }
    : token
      ? {
          from: token.sourceAccount,
          to: token.destinationAccount,
          amount: token.amount.toString(),
          // Token amounts are in the mint's unit, not lamports: say which mint.
          description: token.mint ? `mint ${token.mint}` : null,
        }
      : null;
  return {
    from_address: move?.from ?? null,
    to_address: move?.to ?? null,
    amount: move?.amount ?? null,
    tx_status: status,
    program_id: ix.programId,
    instruction: ix.type,
    description: move?.description ?? ix.text,
    instr_index: ix.outerIndex,
    depth: ix.depth,
  };
}

/**
 * One transaction (`{transaction, meta, version}` of getBlock, or a getTransaction result) →
 * record. Throws nothing on its own; the caller still wraps it.
 */
export function buildRecord(rawTx: unknown, place: TxPlacement, ctx: RecordContext): TxOutcome {
  const tx = asObject(rawTx);
  if (!tx) return { kind: 'error', reason: 'transaction is not an object' };
  let transaction = tx.transaction;
  let version = tx.version;
  const wire = wireForm(transaction);
  if (wire) {
    // Binary encodings: decoded to the `json` encoding's shape, which the rest reads as usual.
    let decoded;
    try {
      decoded = decodeWireTransaction(wire.data, wire.encoding);
    } catch (e) {
      return { kind: 'error', reason: `${wire.encoding} transaction: ${errorMessage(e)}` };
    }
    transaction = decoded.transaction;
    // The node writes `version` beside the bytes only when asked for versioned transactions;
    // the bytes always say it.
    version ??= decoded.version;
  } else if (Array.isArray(transaction) || typeof transaction === 'string') {
    return { kind: 'error', reason: 'transaction in an unknown binary encoding' };
  }
  const body = asObject(transaction);
  if (!body) return { kind: 'error', reason: 'missing transaction body' };
  const txHash = asNonEmptyString(asArray(body.signatures)[0]);
  if (!txHash) return { kind: 'error', reason: 'missing signature' };
  const message = asObject(body.message);
  const meta = asObject(tx.meta);

  const keys = accountKeys(message, meta);
  const instructions = flattenInstructions(message, meta, keys);
  if (isVoteOnly(instructions)) return { kind: 'vote' };

  const status = txStatus(meta);
  const fee = toBigInt(meta?.fee);
  const feePayer = keys[0] ?? null;
  const succeeded = status !== 'failed';

  const natives = instructions.map(nativeMove);
  const tokens = instructions.map(tokenMove);
  const internal = instructions.map((ix, i) => internalEntry(ix, status, natives[i], tokens[i]));

  const balances = tokenBalances(meta, keys);
  const nativeMoves = natives.filter((m): m is NativeMove => m !== null);
  const tokenMoves = tokens.filter((m): m is TokenMove => m !== null);

  let tokenTransfers = succeeded ? tokenTransfersFromMoves(tokenMoves, balances) : [];
  if (succeeded && meta && tokenMoves.length === 0) tokenTransfers = tokenTransfersFromBalances(balances);

  let native = null;
  if (succeeded) {
    native =
      nativeMoves.length > 0
        ? summarizeNativeMoves(nativeMoves)
        : meta
          ? nativeFromBalanceDeltas(meta, keys, fee, balances)
          : null;
  }

  const transferType: TransferType = !succeeded
    ? 'contract_call'
    : tokenTransfers.length > 0
      ? 'token'
      : native
        ? 'native'
        : 'contract_call';

  const record: NormalizedTx = {
    ...emptyTx(ctx, txHash),
    height: place.slot,
    block_hash: place.blockHash,
    tx_time: place.blockTime,
    tx_index: place.txIndex,
    tx_version: txVersion(version),
    sender: native ? native.from : feePayer,
    receiver: native ? native.to : mainProgram(instructions),
    fee_payer: feePayer,
    transfer_type: transferType,
    amount: native ? native.lamports.toString() : '0',
    tx_status: status,
    tx_fee: fee === null ? null : fee.toString(),
    gas_used: toDecimal(meta?.computeUnitsConsumed),
    token_transfers: tokenTransfers,
    internal_transactions: internal,
  };
  return { kind: 'record', record };
}
