import { address, type Address } from '@solana/addresses';
import { AccountRole } from '@solana/instructions';
import {
  appendTransactionMessageInstruction, compileTransactionMessage, createTransactionMessage, getCompiledTransactionMessageEncoder, setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/transaction-messages';
import { compileTransaction, getBase64EncodedWireTransaction, type Transaction } from '@solana/transactions';
import { base58Encode, NETWORKS, type ChainOrigins } from '@chainpipe/chains';
import { OriginError, jsonRpcCall } from '@chainpipe/upstreams';
import type { DepositKeyRef } from './evm-transaction';
import type { FeePlan, SignedTransfer, TransferCall, TransferChain, TransferReceipt } from './outgoing-transfers';
import type { Signer } from './signer';

type Blockhash = Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0]['blockhash'];
type SignatureBytes = NonNullable<Transaction['signatures'][Address]>;

/** The System program: native SOL moves by its `Transfer` instruction. */
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/**
 * Lamports an account without data must hold to exist (rent exemption: (128 + 0) bytes × 3480
 * lamports per byte-year × 2 years = 890 880; what `getMinimumBalanceForRentExemption(0)` answers
 * on mainnet). A transfer that leaves the sender, or creates the recipient, with 0 < balance < this
 * is refused by the chain (`InsufficientFundsForRent`); 0 closes the sender's account, which is allowed.
 */
export const RENT_EXEMPT_MINIMUM = 890_880n;

/** The fee of a transaction with one signature (Solana's base fee, lamports; no priority fee is paid). */
export const SOLANA_SIGNATURE_FEE = 5000n;

/**
 * Whether a forward can leave `kept` lamports (the order's fees) at its Solana deposit address:
 * after the forward's own fee the account must end empty or rent-exempt, or the chain refuses
 * the forward (and `SolanaSender` refuses to sign it). The gateway refuses such orders upfront.
 */
export function solanaKeepsRent(kept: bigint): boolean {
  const left = kept - SOLANA_SIGNATURE_FEE;
  return left === 0n || left >= RENT_EXEMPT_MINIMUM;
}

/** Why a Solana sweep is not sent: the deposit account, or the empty treasury account, would end under the rent-exempt minimum. */
export type SolanaSweepFit = { kind: 'sweep'; value: bigint } | { kind: 'skip'; reason: 'deposit_rent' | 'treasury_rent' };

/**
 * The rent rule applied to a sweep `decideSweep` (`@chainpipe/orders`) chose: `value` lamports
 * out of `held`, the transaction paying `fee`. The deposit account must end empty (a sweep of
 * everything closes it, allowed) or at least RENT_EXEMPT_MINIMUM. A remainder in between (the
 * address holds more than fees + fee, by less than the minimum) is not closed by sweeping it too:
 * a sweep never takes more than the fees, so the minimum stays and the sweep is that much
 * smaller (`deposit_rent` when nothing is left to send). An empty treasury account (it has never
 * received anything) must get at least the minimum (`treasury_rent`). Without these the node
 * refuses the transaction (`InsufficientFundsForRent`), and `SolanaSender` would not sign it.
 */
export function solanaSweepFit(f: { held: bigint; value: bigint; fee: bigint; treasuryHeld: bigint }): SolanaSweepFit {
  const left = f.held - f.value - f.fee;
  const value = left > 0n && left < RENT_EXEMPT_MINIMUM ? f.held - f.fee - RENT_EXEMPT_MINIMUM : f.value;
  if (value <= 0n) return { kind: 'skip', reason: 'deposit_rent' };
  if (f.treasuryHeld === 0n && value < RENT_EXEMPT_MINIMUM) return { kind: 'skip', reason: 'treasury_rent' };
  return { kind: 'sweep', value };
}

/**
 * What a Solana transfer will cost: the fee the chain answered for the message
 * (`getFeeForMessage`: 5000 lamports per signature, no priority fee) under one recent blockhash.
 * The blockhash is part of the terms: the message signed with another one could cost otherwise,
 * and a refund computed as balance − fee must be signed with the fee it was computed with.
 */
export interface SolanaFeePlan extends FeePlan {
  blockhash: string;
  /** The last block height at which a transaction of this blockhash can still land. */
  lastValidBlockHeight: number;
}

function isSolanaFeePlan(plan: FeePlan | undefined): plan is SolanaFeePlan {
  return plan !== undefined && 'blockhash' in plan && 'lastValidBlockHeight' in plan;
}

export interface SolanaOrigin {
  /** The chain's JSON-RPC origin. */
  url: string;
  timeoutMs: number;
}

/**
 * The message of a native SOL transfer from `from` to `to`: one System `Transfer` instruction
 * (data: u32 LE instruction index 2, u64 LE lamports; accounts: the sender, writable signer and
 * fee payer, and the recipient, writable), legacy format, its lifetime the blockhash.
 */
export function solanaTransferMessage(from: string, to: string, lamports: bigint, blockhash: string, lastValidBlockHeight: number) {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  const transfer = {
    programAddress: address(SYSTEM_PROGRAM),
    accounts: [
      { address: address(from), role: AccountRole.WRITABLE_SIGNER },
      { address: address(to), role: AccountRole.WRITABLE },
    ],
    data,
  };
  const base = setTransactionMessageFeePayer(address(from), createTransactionMessage({ version: 'legacy' }));
  const timed = setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) }, base);
  return appendTransactionMessageInstruction(transfer, timed);
}

/** The wire bytes of the message alone, base64: what `getFeeForMessage` prices. */
function messageBase64(message: ReturnType<typeof solanaTransferMessage>): string {
  return Buffer.from(getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(message))).toString('base64');
}

/**
 * Builds a native SOL transfer from a deposit address and has the signer sign its message bytes
 * with the key of the index (ed25519 signs the message itself; the signer refuses a key that does
 * not own `from.address`). The base64 wire transaction and its id: the base58 of the signature.
 */
export async function signSolanaTransfer(signer: Signer, from: DepositKeyRef, to: string, lamports: bigint, fees: SolanaFeePlan, signal?: AbortSignal): Promise<{ raw: string; hash: string }> {
  const compiled = compileTransaction(solanaTransferMessage(from.address, to, lamports, fees.blockhash, fees.lastValidBlockHeight));
  const signature = await signer.signMessage({ family: 'svm', index: from.index, address: from.address, message: Uint8Array.from(compiled.messageBytes) }, signal);
  const signed: Transaction = { ...compiled, signatures: { ...compiled.signatures, [from.address as Address]: signature as SignatureBytes } };
  return { raw: getBase64EncodedWireTransaction(signed), hash: base58Encode(signature) };
}

const lamportsOf = (v: unknown, what: string): bigint => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`the origin answered ${what} that is not a lamport amount`);
  return BigInt(v);
};

/** The `value` of a Solana RPC answer `{context, value}`. */
const valueOf = (answer: unknown): unknown => (answer && typeof answer === 'object' && 'value' in answer ? (answer as { value: unknown }).value : undefined);

/**
 * Sends native SOL from deposit addresses through a Solana origin (`TransferChain`: signed
 * without sending, so `OutgoingTransfers` stores the transaction before its broadcast). A Solana
 * transaction has no nonce: it lives as long as its recent blockhash (about 150 blocks, a minute
 * or two). A stored transaction whose blockhash expired before the chain took it can never land:
 * `broadcast` says `replaced`, as an EVM transaction whose nonce went elsewhere, and the transfer
 * fails for an operator (one mechanism for "can never be mined").
 */
export class SolanaSender implements TransferChain {
  constructor(
    private readonly origin: SolanaOrigin,
    private readonly signer: Signer,
  ) {}

  private rpc(method: string, params: unknown[]): Promise<unknown> {
    return jsonRpcCall(this.origin.url, method, params, this.origin.timeoutMs);
  }

  async balanceOf(address: string): Promise<bigint> {
    return lamportsOf(valueOf(await this.rpc('getBalance', [address, { commitment: 'confirmed' }])), 'a balance');
  }

  /** The fee of a transfer from `from` to `to` under the latest blockhash, as the node prices its message. */
  async feePlan(from: string, to: string): Promise<SolanaFeePlan> {
    const latest = valueOf(await this.rpc('getLatestBlockhash', [{ commitment: 'confirmed' }])) as { blockhash?: unknown; lastValidBlockHeight?: unknown } | undefined;
    if (typeof latest?.blockhash !== 'string' || typeof latest.lastValidBlockHeight !== 'number') throw new Error('the origin answered no latest blockhash');
    const { blockhash, lastValidBlockHeight } = latest as { blockhash: string; lastValidBlockHeight: number };
    // the amount does not change the fee: the message of any amount prices the transfer
    const message = messageBase64(solanaTransferMessage(from, to, 0n, blockhash, lastValidBlockHeight));
    const fee = valueOf(await this.rpc('getFeeForMessage', [message, { commitment: 'confirmed' }]));
    // null: the node no longer knows the blockhash (it expired between the two calls)
    if (fee === null) throw new Error(`the origin has no fee for blockhash ${blockhash} (expired)`);
    return { maxNetworkFee: lamportsOf(fee, 'a fee'), blockhash, lastValidBlockHeight };
  }

  /**
   * Checks the rent rule the chain applies (RENT_EXEMPT_MINIMUM): the sender left with nothing or
   * at least the minimum, a new recipient given at least the minimum. A refund that empties the
   * deposit address (balance − fee) passes; one leaving dust, or a forward leaving fees under the
   * minimum, would be refused by every node: it is refused here, before anything is signed.
   */
  private async checkRent(from: string, to: string, value: bigint, fee: bigint): Promise<void> {
    const [held, recipient] = await Promise.all([this.balanceOf(from), this.balanceOf(to)]);
    const left = held - value - fee;
    if (left < 0n) throw new Error(`${from} holds ${held} lamports, not ${value} + the fee ${fee}`);
    if (left > 0n && left < RENT_EXEMPT_MINIMUM) throw new Error(`the transfer would leave ${from} with ${left} lamports, under the rent-exempt minimum ${RENT_EXEMPT_MINIMUM} (InsufficientFundsForRent)`);
    if (recipient === 0n && value < RENT_EXEMPT_MINIMUM) throw new Error(`${value} lamports to the empty account ${to} stay under the rent-exempt minimum ${RENT_EXEMPT_MINIMUM} (InsufficientFundsForRent)`);
  }

  /** Signs a native transfer of `call.value` lamports, fee terms from the call or the node; nothing is sent. */
  async sign(from: DepositKeyRef, call: TransferCall): Promise<SignedTransfer> {
    if (call.data !== undefined && call.data !== '' && call.data !== '0x') throw new Error('a Solana transfer carries no calldata (no memo is supported)');
    if (call.fees !== undefined && !isSolanaFeePlan(call.fees)) throw new Error('the fee terms of a Solana transfer need its blockhash');
    const fees = isSolanaFeePlan(call.fees) ? call.fees : await this.feePlan(from.address, call.to);
    await this.checkRent(from.address, call.to, call.value, fees.maxNetworkFee);
    const { raw, hash } = await signSolanaTransfer(this.signer, from, call.to, call.value, fees);
    return { raw, hash, nonce: null };
  }

  private async status(hash: string): Promise<{ slot: number; err: unknown } | null> {
    const [status] = (valueOf(await this.rpc('getSignatureStatuses', [[hash], { searchTransactionHistory: true }])) as unknown[] | undefined) ?? [];
    if (!status || typeof status !== 'object') return null;
    const s = status as { slot?: unknown; err?: unknown };
    if (typeof s.slot !== 'number') throw new Error(`the origin answered a status of ${hash} without a slot`);
    return { slot: s.slot, err: s.err ?? null };
  }

  /**
   * Broadcasts a signed transaction (base64, preflight on). `known`: the node has processed it
   * (`AlreadyProcessed`), or its blockhash is gone but the chain holds it. `replaced`: its
   * blockhash expired and the chain never took it: it can never land.
   */
  async broadcast(raw: string, hash: string): Promise<'accepted' | 'known' | 'replaced'> {
    try {
      const answered = await this.rpc('sendTransaction', [raw, { encoding: 'base64', preflightCommitment: 'confirmed' }]);
      if (answered !== hash) throw new Error(`the origin named the transaction ${String(answered)}, not ${hash}`);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof OriginError) || err.kind !== 'rpc') throw err;
      const data = err.rpcError?.data as { err?: unknown } | undefined;
      const reason = typeof data?.err === 'string' ? data.err : '';
      const message = err.rpcError?.message ?? '';
      if (reason === 'AlreadyProcessed' || /already been processed/i.test(message)) return 'known';
      if (reason === 'BlockhashNotFound' || /blockhash not found/i.test(message)) return (await this.status(hash)) ? 'known' : 'replaced';
      throw err;
    }
  }

  /** The transaction's slot, whether it succeeded, and the slots since (its own counting, as an EVM block does). */
  async receipt(hash: string): Promise<TransferReceipt> {
    const [status, head] = await Promise.all([this.status(hash), this.rpc('getSlot', [{ commitment: 'confirmed' }])]);
    if (!status) return { mined: false };
    if (typeof head !== 'number') throw new Error('the origin answered a slot that is not a number');
    return { mined: true, success: status.err === null, blockNumber: status.slot, confirmations: Math.max(head - status.slot + 1, 1) };
  }
}

/**
 * The Solana sender of deposit addresses: the mainnet (deposits are seen on the monitored
 * mainnet) through its configured origin; undefined without one.
 */
export function solanaSenderOf(origins: ChainOrigins, signer: Signer, timeoutMs: number): SolanaSender | undefined {
  const mainnet = NETWORKS.find((n) => n.family === 'svm' && !n.testnet);
  const url = mainnet && origins.urlFor(mainnet.network);
  return url ? new SolanaSender({ url, timeoutMs }, signer) : undefined;
}
