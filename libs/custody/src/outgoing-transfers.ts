import { CHAINS, type ChainFamily, type ChainType } from '@chainpipe/chains';
import type { NewOutgoingTransfer, OutgoingTransferKind, OutgoingTransferRepository, OutgoingTransferRow } from '@chainpipe/order-store';
import type { DepositKeyRef } from './evm-transaction';

/**
 * What a transfer will cost at most, in the chain's native smallest unit, with the chain's own
 * terms beside it (`EvmFeePlan`: gas and fee caps); each chain's sender reads its own kind.
 */
export interface FeePlan {
  /** What the sender must hold on top of the value. */
  maxNetworkFee: bigint;
}

/** The transaction a transfer sends: recipient, native value, calldata (hex; a contract call), a memo. */
export interface TransferCall {
  to: string;
  value: bigint;
  data?: string;
  /**
   * THORChain's memo, carried as the chain carries it (EVM: UTF-8 calldata when `data` is absent;
   * Bitcoin: an OP_RETURN output), so one forwarder serves every source chain.
   */
  memo?: string;
  /**
   * A gas limit fixed by the planner, where the node cannot estimate one: a call that succeeds
   * only after an earlier transfer of the same plan is mined (THORChain's router deposit needs
   * the `approve` before it). Absent: the node's estimate.
   */
  gasLimit?: bigint;
  /**
   * The fee terms to sign with, when the value was computed from them (a refund or a sweep sends
   * what is left after the network fee: other terms at signing could overdraw the address).
   * Absent: the chain's current terms.
   */
  fees?: FeePlan;
  /**
   * The account nonce to sign with, decided by the caller under its sender lock (the gas station,
   * which many orders send from). Absent: the node's pending count (a deposit address sends one
   * order's transfers, one at a time).
   */
  nonce?: number;
}

export interface SignedTransfer {
  raw: string;
  hash: string;
  /** The account nonce it uses; null on chains without one (Bitcoin). */
  nonce: number | null;
}

export type TransferReceipt = { mined: false } | { mined: true; success: boolean; blockNumber: number; confirmations: number };

/**
 * One chain's part of sending from a deposit address, split so the transaction can be stored
 * between signing and broadcasting (`EvmSender` for EVM chains, `TronSender` for Tron).
 */
export interface TransferChain {
  /** Builds and signs `call` from the deposit address; nothing is sent. */
  sign(from: DepositKeyRef, call: TransferCall): Promise<SignedTransfer>;
  /**
   * Broadcasts signed bytes: `accepted`, `known` (the node has it already: in its pool or
   * mined), or `replaced` (it can never be mined: its nonce went to another transaction, on
   * Bitcoin one of its inputs did, on Solana its recent blockhash expired before the chain took it,
   * on Tron the transaction expired before a node took it).
   * Throws when the node could not be asked or refused it for another reason (tried again later).
   */
  broadcast(raw: string, hash: string): Promise<'accepted' | 'known' | 'replaced'>;
  /** Why a `replaced` transaction of this chain can never be mined, for the record; absent: by its nonce or inputs. */
  receipt(hash: string): Promise<TransferReceipt>;
}

/** Why a `replaced` transfer failed for good, as the record says it. */
/** Why a transfer whose broadcast answered `replaced` can never be mined, by chain family. */
const NEVER_MINED: Readonly<Partial<Record<ChainFamily, string>>> & { evm: string } = {
  evm: 'its nonce was taken by another transaction',
  utxo: 'an input was spent by another transaction',
  svm: 'its blockhash expired before the chain took it',
  tvm: 'it expired before a node took it',
};

/** What to send: a transfer of an order, of one kind, from a deposit address. */
export interface OutgoingTransferIntent {
  orderId: string;
  kind: OutgoingTransferKind;
  chainType: string;
  from: DepositKeyRef;
  call: TransferCall;
  /** What moves, for the record: the token's contract (null: the native coin) and amount. */
  asset: string | null;
  amount: bigint;
  detail?: Record<string, unknown>;
}

export interface OutgoingTransfersDeps {
  store: Pick<OutgoingTransferRepository, 'find' | 'store' | 'markBroadcast' | 'markConfirmed' | 'markFailed' | 'listOpen'>;
  /** The sending side of a chain type; undefined for a chain nothing is sent on. */
  chain(chainType: string): TransferChain | undefined;
  /** Confirmations a transfer needs to count as confirmed (its own block counts: 1 is mined). */
  confirmations(chainType: string): number;
}

/**
 * The one way money leaves a deposit address (forwards, refunds, fee sweeps): the transaction is
 * signed once and stored BEFORE its broadcast; whatever happens after (a crash, a node that did
 * not answer), the stored bytes are what is broadcast again, same hash, never a new signature
 * with another nonce. An (order, kind) has one transfer: a second `send` returns the first.
 */
export class OutgoingTransfers {
  constructor(private readonly deps: OutgoingTransfersDeps) {}

  private chainOf(chainType: string): TransferChain {
    const chain = this.deps.chain(chainType);
    if (!chain) throw new Error(`no sender is configured for ${chainType}`);
    return chain;
  }

  /**
   * The order's transfer of `intent.kind`: the stored one when there is one, else signed and
   * stored now; then broadcast unless it is finished. Returns the stored row as it ends up. A
   * failed broadcast throws with the transfer stored as `signed` (`resumeOpen` sends it again).
   */
  async send(intent: OutgoingTransferIntent): Promise<OutgoingTransferRow> {
    return this.broadcast(await this.prepare(intent));
  }

  /**
   * The order's transfer of `intent.kind`, stored (signed now when there is none yet), not
   * broadcast. `store`: the repository of a sender lock's transaction (`GasStation`), so the row
   * commits before the lock is released.
   */
  async prepare(intent: OutgoingTransferIntent, store: Pick<OutgoingTransfersDeps['store'], 'find' | 'store'> = this.deps.store): Promise<OutgoingTransferRow> {
    const chain = this.chainOf(intent.chainType);
    let row = await store.find(intent.orderId, intent.kind);
    if (!row) {
      const signed = await chain.sign(intent.from, intent.call);
      const fresh: NewOutgoingTransfer = {
        order_id: intent.orderId,
        kind: intent.kind,
        chain_type: intent.chainType,
        from_index: intent.from.index,
        from_address: intent.from.address,
        to_address: intent.call.to,
        asset: intent.asset,
        amount: intent.amount,
        nonce: signed.nonce,
        raw_tx: signed.raw,
        tx_hash: signed.hash,
        detail: intent.detail,
      };
      // a concurrent sender that stored first wins: its transaction is the one broadcast
      row = (await store.store(fresh)).row;
    }
    return row;
  }

  /** Broadcasts a stored transfer (again): its stored bytes, so its hash never changes. */
  async broadcast(row: OutgoingTransferRow): Promise<OutgoingTransferRow> {
    if (row.status === 'confirmed' || row.status === 'failed') return row;
    const chain = this.chainOf(row.chain_type);
    const outcome = await chain.broadcast(row.raw_tx, row.tx_hash);
    if (outcome === 'replaced') {
      const error = NEVER_MINED[CHAINS[row.chain_type as ChainType]?.family ?? 'evm'] ?? NEVER_MINED.evm;
      await this.deps.store.markFailed(row.id, error);
      return { ...row, status: 'failed', error };
    }
    if (row.status === 'signed') await this.deps.store.markBroadcast(row.id);
    return { ...row, status: 'broadcast' };
  }

  /** Reads a broadcast transfer's receipt: `confirmed` with its confirmations, `failed` when reverted. */
  async follow(row: OutgoingTransferRow): Promise<OutgoingTransferRow> {
    if (row.status === 'confirmed' || row.status === 'failed') return row;
    const receipt = await this.chainOf(row.chain_type).receipt(row.tx_hash);
    if (!receipt.mined) return row;
    if (!receipt.success) {
      await this.deps.store.markFailed(row.id, 'reverted', receipt.blockNumber);
      return { ...row, status: 'failed', error: 'reverted', block_number: String(receipt.blockNumber) };
    }
    if (receipt.confirmations < this.deps.confirmations(row.chain_type)) return row;
    await this.deps.store.markConfirmed(row.id, receipt.blockNumber);
    return { ...row, status: 'confirmed', block_number: String(receipt.blockNumber) };
  }

  /**
   * Every transfer not yet mined, broadcast again from its stored bytes and followed: what a
   * restart does first, and each pass after. A transfer whose chain fails is left for the next pass.
   */
  async resumeOpen(limit: number, onError: (row: OutgoingTransferRow, err: unknown) => void): Promise<OutgoingTransferRow[]> {
    const out: OutgoingTransferRow[] = [];
    for (const row of await this.deps.store.listOpen(limit)) {
      try {
        out.push(await this.follow(await this.broadcast(row)));
      } catch (err) {
        onError(row, err);
        out.push(row);
      }
    }
    return out;
  }
}
