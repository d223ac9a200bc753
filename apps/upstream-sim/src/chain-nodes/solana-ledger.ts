import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519';
import { getCompiledTransactionMessageDecoder, type CompiledTransactionMessage } from '@solana/transaction-messages';
import { getTransactionDecoder } from '@solana/transactions';
import { base58Decode, base58Encode } from '@chainpipe/chains';
import { RpcError, invalidParams } from '../json-rpc';
import { SOLANA_LAMPORTS_PER_SIGNATURE, SOLANA_SYSTEM_PROGRAM as SYSTEM_PROGRAM, solanaRentExemptMinimum } from './chain-rules';
import type { JsonObject } from './json';
import type { ProducedBlock } from './block-producer';

/** The fee of one signature (lamports): Solana's base fee, without a priority fee. */
const LAMPORTS_PER_SIGNATURE = SOLANA_LAMPORTS_PER_SIGNATURE;
/** What an account without data must hold to exist (890 880 lamports). */
const RENT_EXEMPT_MINIMUM = solanaRentExemptMinimum(0);
/** Blocks stay valid for 150 block heights after their own (Solana's recent-blockhash window). */
export const BLOCKHASH_VALIDITY = 150;
/** Development accounts start with 1000 SOL. */
export const FUNDED_LAMPORTS = 1000n * 10n ** 9n;

/** The Solana addresses (base58 of 32 bytes) of `SIM_FUNDED_ACCOUNTS`; its EVM entries are the EVM ledgers'. */
export function fundedSolanaAccounts(list: string): Map<string, bigint> {
  const funded = new Map<string, bigint>();
  for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (item.startsWith('0x')) continue;
    if (base58Decode(item)?.length !== 32) throw new Error(`SIM_FUNDED_ACCOUNTS: ${JSON.stringify(item)} is neither an EVM nor a Solana address`);
    funded.set(item, FUNDED_LAMPORTS);
  }
  return funded;
}

/** What `SolanaLedger` keeps of the chain the node serves: its blocks and transactions by slot and signature. */
export interface SolanaLedgerChain {
  blocks: Map<number, { slot: number; variants: { json?: JsonObject; jsonParsed?: JsonObject } }>;
  txs: Map<string, { slot: number; variants: { json?: JsonObject; jsonParsed?: JsonObject } }>;
  head: { slot: number; variants: { json?: JsonObject; jsonParsed?: JsonObject } } | null;
  firstSlot: number | null;
}

interface PendingTransfer {
  signature: string;
  signatures: string[];
  accountKeys: string[];
  header: JsonObject;
  instruction: { programIdIndex: number; accounts: number[]; data: string };
  recentBlockhash: string;
  from: string;
  to: string;
  lamports: bigint;
  fee: bigint;
}

/** A `sendTransaction` refused in preflight: the node's code, message and `data.err`. */
function simulationFailed(message: string, err: unknown): RpcError {
  return new RpcError(-32002, `Transaction simulation failed: ${message}`, { accounts: null, err, innerInstructions: null, logs: [], replacementBlockhash: null, returnData: null, unitsConsumed: 0 });
}

/**
 * A Solana chain that takes signed transactions: balances (lamports), `sendTransaction` with a
 * node's preflight (every signature verified over the message bytes, the recent blockhash within
 * its 150 blocks, a duplicate refused as already processed, the fee payer's funds, the rent rule),
 * and a slot produced per tick holding what was sent, as a `json` getBlock result that the node
 * serves and the block producer posts as the streamer's `block` dataset. Only System transfers
 * execute (what the platform and the development payer send); anything else is refused.
 */
export class SolanaLedger {
  private readonly balances = new Map<string, bigint>();
  private readonly blockhashes = new Map<string, number>();
  private readonly seen = new Set<string>();
  private pending: PendingTransfer[] = [];

  constructor(
    private readonly chain: SolanaLedgerChain,
    private readonly opts: { network: string; funded: ReadonlyMap<string, bigint> },
  ) {
    const head = this.head();
    this.blockhashes.set(head.blockhash, head.blockHeight);
  }

  get network(): string {
    return this.opts.network;
  }

  /** True once a transaction was ever sent: a dormant chain produces no slots. */
  get active(): boolean {
    return this.seen.size > 0;
  }

  /** The head slot, its block height and blockhash (a chain without fixtures starts at a genesis of its own). */
  head(): { slot: number; blockHeight: number; blockhash: string } {
    const entry = this.chain.head;
    const block = entry ? (entry.variants.json ?? entry.variants.jsonParsed) : undefined;
    if (!entry || !block) return { slot: 0, blockHeight: 0, blockhash: base58Encode(createHash('sha256').update(`${this.opts.network}:genesis`).digest()) };
    return { slot: entry.slot, blockHeight: typeof block.blockHeight === 'number' ? block.blockHeight : 0, blockhash: String(block.blockhash) };
  }

  balanceOf(address: string): bigint {
    return this.balances.get(address) ?? this.opts.funded.get(address) ?? 0n;
  }

  /** A balance counting the transfers sent but not yet in a slot. */
  private pendingBalanceOf(address: string): bigint {
    let b = this.balanceOf(address);
    for (const p of this.pending) {
      if (p.from === address) b -= p.lamports + p.fee;
      if (p.to === address) b += p.lamports;
    }
    return b;
  }

  latestBlockhash(): { slot: number; blockhash: string; lastValidBlockHeight: number } {
    const h = this.head();
    return { slot: h.slot, blockhash: h.blockhash, lastValidBlockHeight: h.blockHeight + BLOCKHASH_VALIDITY };
  }

  private blockhashValid(blockhash: string): boolean {
    const height = this.blockhashes.get(blockhash);
    return height !== undefined && height + BLOCKHASH_VALIDITY >= this.head().blockHeight;
  }

  private decodeMessage(bytes: Uint8Array): CompiledTransactionMessage & { lifetimeToken: string } {
    try {
      return getCompiledTransactionMessageDecoder().decode(bytes) as CompiledTransactionMessage & { lifetimeToken: string };
    } catch (err) {
      throw invalidParams(`invalid transaction: failed to deserialize the message: ${(err as Error).message}`);
    }
  }

  /** `getFeeForMessage`: the fee of a base64 message; null when its blockhash is no longer valid, as a node answers. */
  feeForMessage(base64: string): number | null {
    const message = this.decodeMessage(Buffer.from(base64, 'base64'));
    if (!this.blockhashValid(message.lifetimeToken)) return null;
    return Number(LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts));
  }

  /** `sendTransaction` of base64 wire bytes: the transaction's signature once it passed preflight. */
  sendTransaction(base64: string): string {
    let tx;
    try {
      tx = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
    } catch (err) {
      throw invalidParams(`failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(err as Error).message}`);
    }
    const message = this.decodeMessage(Uint8Array.from(tx.messageBytes));
    const keys = message.staticAccounts as string[];
    const signers = keys.slice(0, message.header.numSignerAccounts);
    const signatures = signers.map((k) => tx.signatures[k as never] ?? null);
    const verified = signatures.every((sig, i) => sig !== null && ed25519.verify(sig, Uint8Array.from(tx.messageBytes), base58Decode(signers[i])!));
    if (signers.length === 0 || !verified) throw new RpcError(-32003, 'Transaction signature verification failure');
    const signature = base58Encode(signatures[0]!);
    if (this.seen.has(signature)) throw simulationFailed('This transaction has already been processed', 'AlreadyProcessed');
    if (!this.blockhashValid(message.lifetimeToken)) throw simulationFailed('Blockhash not found', 'BlockhashNotFound');
    if (message.version !== 'legacy' || message.instructions.length !== 1) throw invalidParams('Invalid params: the simulator executes legacy transactions of one System transfer only');
    const [ix] = message.instructions;
    const data = ix.data ? Buffer.from(ix.data) : Buffer.alloc(0);
    const accounts = ix.accountIndices ?? [];
    if (keys[ix.programAddressIndex] !== SYSTEM_PROGRAM || data.length !== 12 || data.readUInt32LE(0) !== 2 || accounts.length !== 2) {
      throw invalidParams('Invalid params: the simulator executes legacy transactions of one System transfer only');
    }
    const from = keys[accounts[0]];
    const to = keys[accounts[1]];
    const lamports = data.readBigUInt64LE(4);
    const payer = keys[0];
    if (from !== payer) throw invalidParams('Invalid params: the simulator executes transfers paid by their sender only');
    const fee = LAMPORTS_PER_SIGNATURE * BigInt(signers.length);
    const held = this.pendingBalanceOf(from);
    if (held === 0n) throw simulationFailed('Attempt to debit an account but found no record of a prior credit.', 'AccountNotFound');
    if (held < fee) throw simulationFailed('Insufficient funds for fee', 'InsufficientFundsForFee');
    if (held < fee + lamports) throw simulationFailed('Error processing Instruction 0: custom program error: 0x1', { InstructionError: [0, { Custom: 1 }] });
    // the rent rule: an account may end empty or rent-exempt, never in between
    const left = held - fee - lamports;
    if (left > 0n && left < RENT_EXEMPT_MINIMUM) throw simulationFailed('Transaction results in an account (0) with insufficient funds for rent', { InsufficientFundsForRent: { account_index: accounts[0] } });
    const received = (from === to ? left : this.pendingBalanceOf(to)) + lamports;
    if (received < RENT_EXEMPT_MINIMUM) throw simulationFailed(`Transaction results in an account (${accounts[1]}) with insufficient funds for rent`, { InsufficientFundsForRent: { account_index: accounts[1] } });
    this.seen.add(signature);
    this.pending.push({
      signature,
      signatures: signatures.map((s) => base58Encode(s!)),
      accountKeys: keys,
      header: { numRequiredSignatures: message.header.numSignerAccounts, numReadonlySignedAccounts: message.header.numReadonlySignerAccounts, numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts },
      instruction: { programIdIndex: ix.programAddressIndex, accounts: [...accounts], data: base58Encode(data) },
      recentBlockhash: message.lifetimeToken,
      from,
      to,
      lamports,
      fee,
    });
    return signature;
  }

  /** Whether a signature was ever taken (sent, in a slot or not yet). */
  knows(signature: string): boolean {
    return this.seen.has(signature);
  }

  /**
   * The next slot with every pending transfer, added to the chain the node serves (getBlock,
   * getTransaction, getSignatureStatuses answer it) and returned as the streamer's `block`
   * dataset item: a `json` getBlock result, whose slot the batch's range carries.
   */
  produceBlock(nowSec: number): ProducedBlock {
    const parent = this.head();
    const slot = parent.slot + 1;
    const blockHeight = parent.blockHeight + 1;
    const txs = this.pending.splice(0);
    const blockhash = base58Encode(createHash('sha256').update(`${this.opts.network}:${slot}:${parent.blockhash}:${txs.map((t) => t.signature).join(',')}`).digest());
    const transactions: JsonObject[] = txs.map((t) => {
      const preBalances = t.accountKeys.map((k) => Number(this.balanceOf(k)));
      this.balances.set(t.from, this.balanceOf(t.from) - t.lamports - t.fee);
      this.balances.set(t.to, this.balanceOf(t.to) + t.lamports);
      const postBalances = t.accountKeys.map((k) => Number(this.balanceOf(k)));
      const meta: JsonObject = {
        computeUnitsConsumed: 150,
        err: null,
        fee: Number(t.fee),
        innerInstructions: [],
        loadedAddresses: { readonly: [], writable: [] },
        logMessages: [`Program ${SYSTEM_PROGRAM} invoke [1]`, `Program ${SYSTEM_PROGRAM} success`],
        postBalances,
        postTokenBalances: [],
        preBalances,
        preTokenBalances: [],
        rewards: [],
        status: { Ok: null },
      };
      const transaction: JsonObject = {
        message: { accountKeys: t.accountKeys, header: t.header, instructions: [{ ...t.instruction, stackHeight: null }], recentBlockhash: t.recentBlockhash },
        signatures: t.signatures,
      };
      this.chain.txs.set(t.signature, { slot, variants: { json: { blockTime: nowSec, meta, slot, transaction } } });
      return { meta, transaction };
    });
    const block: JsonObject = { blockHeight, blockTime: nowSec, blockhash, parentSlot: parent.slot, previousBlockhash: parent.blockhash, rewards: [], transactions };
    const entry = { slot, variants: { json: block } };
    this.chain.blocks.set(slot, entry);
    this.chain.head = entry;
    this.chain.firstSlot ??= slot;
    this.blockhashes.set(blockhash, blockHeight);
    return { number: slot, block, receipts: [], dataset: 'block', item: block };
  }
}

