import { NETWORKS, type ChainOrigins } from '@chainpipe/chains';
import { OriginError, jsonRpcCall } from '@chainpipe/upstreams';
import { isBitcoinFeePlan, memoScript, outputScriptOf, p2wpkhVsize, shapeBitcoinTransfer, signBitcoinTransfer, type BitcoinFeePlan, type BitcoinUtxo } from './bitcoin-transaction';
import type { DepositKeyRef } from './evm-transaction';
import type { SignedTransfer, TransferCall, TransferChain, TransferReceipt } from './outgoing-transfers';
import type { Signer } from './signer';

export interface BitcoinOrigin {
  /** Bitcoin Core's JSON-RPC origin (with -txindex: receipts read any transaction by its txid). */
  url: string;
  timeoutMs: number;
  /** Blocks within which `estimatesmartfee` should see the transaction mined. */
  confTarget: number;
  /** The lowest fee rate used (sat/vB), whatever the estimate: the node's relay minimum and a margin. */
  minFeeRate: bigint;
}

/** Core's RPC_INVALID_ADDRESS_OR_KEY: `getrawtransaction` of a txid the node does not know. */
const RPC_INVALID_ADDRESS_OR_KEY = -5;

/**
 * BTC/kvB as Core answers it (a JSON number) in sat/vB, rounded up: `1e8 / 1000` sat/vB per
 * BTC/kvB. The decimal text is read, not multiplied as a float.
 */
export function satPerVbyte(btcPerKvB: number): bigint {
  const [whole, frac = ''] = btcPerKvB.toFixed(8).split('.');
  const satPerKvB = BigInt(whole) * 100_000_000n + BigInt(frac.padEnd(8, '0'));
  return (satPerKvB + 999n) / 1000n;
}

/** A Core amount (BTC, a JSON number with at most 8 decimals) in satoshis. */
export function satoshis(btc: number): bigint {
  if (typeof btc !== 'number' || !Number.isFinite(btc) || btc < 0) throw new Error(`the origin answered ${String(btc)}, not an amount`);
  const [whole, frac = ''] = btc.toFixed(8).split('.');
  return BigInt(whole) * 100_000_000n + BigInt(frac.padEnd(8, '0'));
}

/**
 * Sends from P2WPKH deposit addresses through Bitcoin Core: the address's unspent outputs from
 * `scantxoutset` (Core keeps no address index; the scan reads the UTXO set, so only mined
 * outputs count), the fee rate from `estimatesmartfee` (never under the floor), every output
 * spent, the rest back to the deposit address (the platform's fee and commission stay there
 * until swept). As a `TransferChain` it signs without sending, so `OutgoingTransfers` stores the
 * transaction before its broadcast; Bitcoin has no nonce: once one of its inputs is spent by
 * another transaction, a stored one can never be mined (`replaced`).
 */
export class BitcoinSender implements TransferChain {
  constructor(
    private readonly origin: BitcoinOrigin,
    private readonly signer: Signer,
  ) {}

  private rpc(method: string, params: unknown[]): Promise<unknown> {
    return jsonRpcCall(this.origin.url, method, params, this.origin.timeoutMs);
  }

  /** The scan running now: Core runs one `scantxoutset` at a time and refuses a second ("Scan already in progress"). */
  private scanning: Promise<unknown> = Promise.resolve();

  async utxos(address: string): Promise<BitcoinUtxo[]> {
    // the executor's jobs share this sender: their scans go one after the other
    const scan = this.scanning.catch(() => undefined).then(() => this.rpc('scantxoutset', ['start', [`addr(${address})`]]));
    this.scanning = scan;
    const answer = (await scan) as { success?: boolean; unspents?: { txid: string; vout: number; amount: number }[] } | null;
    if (!answer || answer.success === false || !Array.isArray(answer.unspents)) throw new Error(`the origin's scan of ${address} did not finish`);
    return answer.unspents.map((u) => ({ txid: u.txid, vout: u.vout, value: satoshis(u.amount) }));
  }

  async balanceOf(address: string): Promise<bigint> {
    return (await this.utxos(address)).reduce((sum, u) => sum + u.value, 0n);
  }

  /** The fee rate (sat/vB) for the confirmation target: the node's estimate, at least the floor. */
  async feeRate(): Promise<bigint> {
    const answer = (await this.rpc('estimatesmartfee', [this.origin.confTarget])) as { feerate?: number } | null;
    // without enough data Core answers `errors` and no feerate: the floor it is
    const estimate = typeof answer?.feerate === 'number' ? satPerVbyte(answer.feerate) : 0n;
    return estimate > this.origin.minFeeRate ? estimate : this.origin.minFeeRate;
  }

  /** What sending from `from` to `to` (with a memo) costs at most now: all its outputs spent, value, memo and change made. */
  async feePlan(from: string, to: string, memo?: string): Promise<BitcoinFeePlan> {
    const [utxos, feeRate] = await Promise.all([this.utxos(from), this.feeRate()]);
    return planOf(utxos.length, from, to, memo, feeRate);
  }

  /**
   * Signs `call` spending every unspent output of the deposit address; the fee is the call's
   * plan's `maxNetworkFee` (the value was computed from it) or the plan now.
   */
  async sign(from: DepositKeyRef, call: TransferCall): Promise<SignedTransfer> {
    if (call.data !== undefined) throw new Error('a Bitcoin transfer carries no calldata (a memo goes as `memo`)');
    if (call.fees !== undefined && !isBitcoinFeePlan(call.fees)) throw new Error('the fee terms of a Bitcoin transfer need a fee rate and size');
    const utxos = await this.utxos(from.address);
    const fees = isBitcoinFeePlan(call.fees) ? call.fees : planOf(utxos.length, from.address, call.to, call.memo, await this.feeRate());
    const shape = shapeBitcoinTransfer({ utxos, from: from.address, to: call.to, value: call.value, memo: call.memo, fee: fees.maxNetworkFee });
    const { raw, hash } = await signBitcoinTransfer(this.signer, from, shape);
    return { raw, hash, nonce: null };
  }

  /**
   * Broadcasts a signed transaction (Core answers its txid again for one already in its pool).
   * Already mined (-27 `Transaction outputs already in utxo set`, before v25 `Transaction already
   * in block chain`) or known (`txn-already-known`, `txn-already-in-mempool`): `known`. Its inputs
   * missing or spent (-25 `Inputs missing or spent`, before v22 `Missing inputs`) or taken by
   * another pooled transaction (-26 `txn-mempool-conflict`) while the node does not know it:
   * `replaced`, it can never be mined.
   */
  async broadcast(raw: string, hash: string): Promise<'accepted' | 'known' | 'replaced'> {
    try {
      const answered = await this.rpc('sendrawtransaction', [raw]);
      if (typeof answered !== 'string' || answered.toLowerCase() !== hash.toLowerCase()) throw new Error(`the origin named the transaction ${String(answered)}, not ${hash}`);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof OriginError) || err.kind !== 'rpc') throw err;
      const message = err.rpcError?.message ?? '';
      if (err.rpcError?.code === -27 || /already in (block ?chain|utxo set)|txn-already-known|txn-already-in-mempool/i.test(message)) return 'known';
      // an input spent: by this very transaction once mined (its outputs spent since), or by another
      if (/inputs missing or spent|missing inputs|inputs-missingorspent|txn-mempool-conflict/i.test(message)) return (await this.known(hash)) ? 'known' : 'replaced';
      throw err;
    }
  }

  private async known(hash: string): Promise<boolean> {
    return (await this.transaction(hash)) !== undefined;
  }

  private async transaction(hash: string): Promise<{ blockhash?: string; confirmations?: number } | undefined> {
    try {
      return (await this.rpc('getrawtransaction', [hash, true])) as { blockhash?: string; confirmations?: number };
    } catch (err) {
      if (err instanceof OriginError && err.kind === 'rpc' && err.rpcError?.code === RPC_INVALID_ADDRESS_OR_KEY) return undefined;
      throw err;
    }
  }

  /** Mined once it has a block; a Bitcoin transaction in a block always succeeded. */
  async receipt(hash: string): Promise<TransferReceipt> {
    const tx = await this.transaction(hash);
    if (!tx?.blockhash || typeof tx.confirmations !== 'number' || tx.confirmations < 1) return { mined: false };
    const header = (await this.rpc('getblockheader', [tx.blockhash, true])) as { height?: number };
    if (typeof header?.height !== 'number') throw new Error(`the origin answered no height for block ${tx.blockhash}`);
    return { mined: true, success: true, blockNumber: header.height, confirmations: tx.confirmations };
  }
}

function planOf(inputs: number, from: string, to: string, memo: string | undefined, feeRate: bigint): BitcoinFeePlan {
  const scripts = [outputScriptOf(to), ...(memo !== undefined ? [memoScript(memo)] : []), outputScriptOf(from)];
  const vsize = p2wpkhVsize(Math.max(inputs, 1), scripts);
  return { feeRate, vsize, maxNetworkFee: feeRate * BigInt(vsize) };
}

/**
 * The Bitcoin senders of deposit addresses by chain type (`bitcoin`): the mainnet network through
 * its configured origin. Undefined for a chain type of another family, or without an origin.
 */
export function bitcoinSendersByChainType(
  origins: ChainOrigins,
  signer: Signer,
  opts: Omit<BitcoinOrigin, 'url'>,
): (chainType: string) => BitcoinSender | undefined {
  const senders = new Map<string, BitcoinSender>();
  for (const n of NETWORKS) {
    // P2WPKH deposit addresses are Bitcoin's (BIP84); other UTXO chains have no deposit key
    if (n.family !== 'utxo' || n.chainType !== 'bitcoin' || n.testnet || senders.has(n.chainType)) continue;
    const origin = origins.urlFor(n.network);
    if (origin) senders.set(n.chainType, new BitcoinSender({ url: origin, ...opts }, signer));
  }
  return (chainType) => senders.get(chainType);
}
