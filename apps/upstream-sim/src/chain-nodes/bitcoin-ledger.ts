import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { Block, Transaction, address as btcAddress, crypto as btcCrypto, networks, opcodes, payments, script } from 'bitcoinjs-lib';
import { RpcError } from '../json-rpc';
import { bitcoinDustThreshold, MAX_OP_RETURN_SCRIPT_BYTES } from './chain-rules';
import type { BitcoinChain } from './bitcoin-node';
import type { JsonObject } from './json';
import type { ProducedBlock, ReorgResult } from './block-producer';

/** Bitcoin Core's error codes of `sendrawtransaction` (src/rpc/protocol.h). */
const RPC_DESERIALIZATION_ERROR = -22;
const RPC_TRANSACTION_ERROR = -25;
const RPC_TRANSACTION_REJECTED = -26;
const RPC_TRANSACTION_ALREADY_IN_CHAIN = -27;

/** What a development address starts with: 10 BTC, in one output. */
export const FUNDED_SATS = 1_000_000_000n;
/** The block subsidy since the 2024 halving (3.125 BTC), what the simulated coinbase claims besides the fees. */
const SUBSIDY_SATS = 312_500_000n;
/** Core's default minimum relay fee: 1 sat/vB. */
const MIN_RELAY_SAT_PER_VB = 1n;

/** `SIM_FUNDED_BITCOIN_ADDRESSES` as the ledger takes it; anything but a mainnet P2WPKH address stops the boot. */
export function fundedBitcoinAddresses(list: string): Map<string, bigint> {
  const funded = new Map<string, bigint>();
  for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    let ok = false;
    try {
      ok = btcAddress.toOutputScript(item, networks.bitcoin).length === 22 && item.toLowerCase().startsWith('bc1q');
    } catch {
      ok = false;
    }
    if (!ok) throw new Error(`SIM_FUNDED_BITCOIN_ADDRESSES: ${JSON.stringify(item)} is not a mainnet P2WPKH address`);
    funded.set(item.toLowerCase(), FUNDED_SATS);
  }
  return funded;
}

export interface BitcoinLedgerOptions {
  network: string;
  /** Development addresses with a starting output of their own (address → satoshis). */
  funded: ReadonlyMap<string, bigint>;
  /** What `estimatesmartfee` answers, in sat/vB. */
  feeRateSatVb: bigint;
}

interface Coin {
  value: bigint;
  script: Uint8Array;
  /** Height of the block that made it; null while its transaction is in the mempool. */
  height: number | null;
}

interface Pooled {
  tx: Transaction;
  txid: string;
  fee: bigint;
  /** What each input spent, in order (the prevouts a block's decoded form shows). */
  spent: Coin[];
}

const rejected = (message: string) => new RpcError(RPC_TRANSACTION_REJECTED, message);

/** How many produced blocks a reorg can reach back (the UTXO set before each is kept). */
const MAX_REORG_DEPTH = 64;
const outpoint = (txid: string, vout: number) => `${txid}:${vout}`;
const btc = (sats: bigint) => Number(sats) / 1e8;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function addressOf(s: Uint8Array): string | undefined {
  try {
    return btcAddress.fromOutputScript(s, networks.bitcoin);
  } catch {
    return undefined;
  }
}

/** Core's `scriptPubKey.type` of the output kinds the simulator makes and pays. */
function scriptType(s: Uint8Array): string {
  if (s[0] === opcodes.OP_RETURN) return 'nulldata';
  if (s.length === 22 && s[0] === 0 && s[1] === 20) return 'witness_v0_keyhash';
  if (s.length === 34 && s[0] === 0 && s[1] === 32) return 'witness_v0_scripthash';
  if (s.length === 34 && s[0] === 0x51 && s[1] === 32) return 'witness_v1_taproot';
  if (s.length === 25 && s[0] === opcodes.OP_DUP) return 'pubkeyhash';
  if (s.length === 23 && s[0] === opcodes.OP_HASH160) return 'scripthash';
  return 'nonstandard';
}

function scriptPubKey(s: Uint8Array): JsonObject {
  const address = addressOf(s);
  return { asm: script.toASM(s), hex: hex(s), ...(address ? { address } : {}), type: scriptType(s) };
}

/** The UTF-8 text of an OP_RETURN output's data (THORChain's memo), or undefined. */
export function opReturnText(s: Uint8Array): string | undefined {
  if (s[0] !== opcodes.OP_RETURN) return undefined;
  const chunks = script.decompile(s);
  const data = chunks?.[1];
  return data instanceof Uint8Array ? Buffer.from(data).toString('utf8') : undefined;
}

/** A transaction as Core decodes it (`getrawtransaction … 1`, a `getblock … 2` element without `fee`). */
function decodedTx(tx: Transaction): JsonObject {
  const coinbase = tx.isCoinbase();
  return {
    txid: tx.getId(),
    hash: hex(tx.getHash(true).reverse()),
    version: tx.version,
    size: tx.byteLength(),
    vsize: tx.virtualSize(),
    weight: tx.weight(),
    locktime: tx.locktime,
    vin: tx.ins.map((i) => ({
      ...(coinbase ? { coinbase: hex(i.script) } : { txid: hex(Buffer.from(i.hash).reverse()), vout: i.index, scriptSig: { asm: script.toASM(i.script), hex: hex(i.script) } }),
      ...(i.witness.length > 0 ? { txinwitness: i.witness.map(hex) } : {}),
      sequence: i.sequence,
    })),
    vout: tx.outs.map((o, n) => ({ value: btc(o.value), n, scriptPubKey: scriptPubKey(o.script) })),
    hex: tx.toHex(),
  };
}

/**
 * The moving part of the simulated Bitcoin node: the UTXO set (the development addresses funded
 * as if before the fixtures' tip), `sendrawtransaction` that checks what Core's mempool checks
 * of the transactions the platform sends (every input a P2WPKH output, its witness a valid
 * low-S SIGHASH_ALL signature of its BIP143 digest by the key of the output, no input spent
 * twice, outputs not above inputs, the relay fee, no dust) and answers with Core's codes and
 * messages, a mempool mined into the next block on each tick, and the blocks in the `BitcoinChain`
 * the fixtures fill, so every read method answers them. Synchronous and clock-free.
 */
export class BitcoinLedger {
  private readonly utxos = new Map<string, Coin>();
  private readonly pool: Pooled[] = [];
  /** Outpoints the pool spends → the txid spending them. */
  private readonly poolSpends = new Map<string, string>();
  private used = false;
  private refusing = false;
  /** The last produced blocks (at most MAX_REORG_DEPTH): the UTXO set before each and the transactions it took. */
  private readonly history: { height: number; before: Map<string, Coin>; mined: Pooled[] }[] = [];
  /** Reorgs so far: a replacement block's coinbase (so its hash) differs from the block it replaces. */
  private forks = 0;

  constructor(
    private readonly chain: BitcoinChain,
    private readonly opts: BitcoinLedgerOptions,
  ) {
    const height = this.tipHeight();
    for (const [address, value] of opts.funded) {
      // a funding output of its own per address, named by a txid no real transaction has
      const txid = createHash('sha256').update(`chainpipe-sim-funding:${address}`).digest('hex');
      this.utxos.set(outpoint(txid, 0), { value, script: btcAddress.toOutputScript(address, networks.bitcoin), height });
    }
  }

  get network(): string {
    return this.opts.network;
  }

  /** True once a transaction was ever sent: a dormant chain produces no blocks. */
  get active(): boolean {
    return this.used;
  }

  private tipHeight(): number {
    return typeof this.chain.tip?.height === 'number' ? this.chain.tip.height : 0;
  }

  /** A node outage of the broadcast path: every raw transaction refused. */
  refuseBroadcasts(refuse: boolean): void {
    this.refusing = refuse;
  }

  /** `estimatesmartfee`: the configured rate in BTC/kvB. */
  estimateSmartFee(confTarget: number): JsonObject {
    return { feerate: Number(this.opts.feeRateSatVb * 1000n) / 1e8, blocks: Math.max(2, confTarget) };
  }

  /** What `estimatesmartfee` answers (sat/vB). */
  get feeRateSatVb(): bigint {
    return this.opts.feeRateSatVb;
  }

  /** The mined unspent outputs paying `address` (satoshis), with their height. */
  unspentOf(address: string): { txid: string; vout: number; value: bigint; height: number }[] {
    const target = hex(btcAddress.toOutputScript(address, networks.bitcoin));
    const out: { txid: string; vout: number; value: bigint; height: number }[] = [];
    for (const [key, coin] of this.utxos) {
      if (coin.height === null || hex(coin.script) !== target) continue;
      const [txid, vout] = key.split(':');
      out.push({ txid, vout: Number(vout), value: coin.value, height: coin.height });
    }
    return out;
  }

  /** `scantxoutset start [addr(…)]`: the mined unspent outputs paying the addresses. */
  scan(addresses: readonly string[]): JsonObject {
    const unspents = addresses.flatMap((a) => this.unspentOf(a).map((u) => ({ txid: u.txid, vout: u.vout, scriptPubKey: hex(btcAddress.toOutputScript(a, networks.bitcoin)), amount: btc(u.value), coinbase: false, height: u.height, value: u.value })));
    const total = unspents.reduce((sum, u) => sum + u.value, 0n);
    return {
      success: true,
      txouts: this.utxos.size,
      height: this.tipHeight(),
      bestblock: this.chain.tip?.hash ?? '0'.repeat(64),
      unspents: unspents.map(({ value: _value, ...u }) => u),
      total_amount: btc(total),
    };
  }

  /** A pooled transaction as `getrawtransaction <txid> true` shows it (no block yet); undefined when not pooled. */
  pooledTx(txid: string): JsonObject | undefined {
    const p = this.pool.find((e) => e.txid === txid);
    return p ? decodedTx(p.tx) : undefined;
  }

  private coinOf(key: string): Coin | undefined {
    const mined = this.utxos.get(key);
    if (mined) return mined;
    const [txid, vout] = key.split(':');
    const parent = this.pool.find((p) => p.txid === txid);
    const out = parent?.tx.outs[Number(vout)];
    return out ? { value: out.value, script: out.script, height: null } : undefined;
  }

  /** Verifies and pools a raw transaction as Core's `sendrawtransaction` does; its txid, or Core's error. */
  submitRaw(raw: unknown): string {
    if (this.refusing) throw new RpcError(-9, 'simulated outage: Bitcoin is not connected');
    let tx: Transaction;
    try {
      if (typeof raw !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(raw)) throw new Error('not hex');
      tx = Transaction.fromHex(raw);
    } catch {
      throw new RpcError(RPC_DESERIALIZATION_ERROR, 'TX decode failed. Make sure the tx has at least one input.');
    }
    const txid = tx.getId();
    // Core answers the txid again for a transaction already in its mempool
    if (this.pool.some((p) => p.txid === txid)) return txid;
    if (tx.outs.some((_, n) => this.utxos.has(outpoint(txid, n)))) throw new RpcError(RPC_TRANSACTION_ALREADY_IN_CHAIN, 'Transaction outputs already in utxo set');
    if (tx.ins.length === 0 || tx.isCoinbase()) throw rejected('coinbase');
    const keys = tx.ins.map((i) => outpoint(hex(Buffer.from(i.hash).reverse()), i.index));
    if (new Set(keys).size !== keys.length) throw rejected('bad-txns-inputs-duplicate');
    const spent: Coin[] = [];
    for (const key of keys) {
      if (this.poolSpends.has(key)) throw rejected('txn-mempool-conflict');
      const coin = this.coinOf(key);
      if (!coin) throw new RpcError(RPC_TRANSACTION_ERROR, 'Inputs missing or spent');
      spent.push(coin);
    }
    tx.ins.forEach((input, i) => this.verifyWitness(tx, i, spent[i], input));
    const valueIn = spent.reduce((sum, c) => sum + c.value, 0n);
    const valueOut = tx.outs.reduce((sum, o) => sum + o.value, 0n);
    if (valueOut > valueIn) throw rejected('bad-txns-in-belowout');
    const fee = valueIn - valueOut;
    const minFee = BigInt(tx.virtualSize()) * MIN_RELAY_SAT_PER_VB;
    if (fee < minFee) throw rejected(`min relay fee not met, ${fee} < ${minFee}`);
    for (const o of tx.outs) {
      if (o.script[0] === opcodes.OP_RETURN) {
        if (o.script.length > MAX_OP_RETURN_SCRIPT_BYTES) throw rejected('scriptpubkey');
      } else if (o.value < bitcoinDustThreshold(o.script)) throw rejected('dust');
    }
    for (const key of keys) this.poolSpends.set(key, txid);
    this.pool.push({ tx, txid, fee, spent });
    this.used = true;
    return txid;
  }

  private verifyWitness(tx: Transaction, i: number, coin: Coin, input: Transaction['ins'][number]): void {
    const failed = (why: string) => rejected(`mandatory-script-verify-flag-failed (${why})`);
    if (!(coin.script.length === 22 && coin.script[0] === 0 && coin.script[1] === 20)) throw failed('the simulator spends P2WPKH outputs only');
    if (input.script.length > 0) throw failed('Witness requires empty scriptSig');
    if (input.witness.length !== 2) throw failed('Witness program hash mismatch');
    const [der, pubkey] = input.witness;
    if (hex(btcCrypto.hash160(pubkey)) !== hex(coin.script.subarray(2))) throw failed('Witness program hash mismatch');
    let decoded: { signature: Uint8Array; hashType: number };
    try {
      decoded = script.signature.decode(der);
    } catch {
      throw failed('Non-canonical DER signature');
    }
    if (decoded.hashType !== Transaction.SIGHASH_ALL) throw failed('the simulator verifies SIGHASH_ALL only');
    const scriptCode = payments.p2pkh({ hash: coin.script.subarray(2), network: networks.bitcoin }).output!;
    const digest = tx.hashForWitnessV0(i, scriptCode, coin.value, decoded.hashType);
    let valid = false;
    try {
      valid = secp256k1.verify(decoded.signature, digest, pubkey, { lowS: true });
    } catch {
      valid = false;
    }
    if (!valid) throw failed('Signature must be zero for failed CHECK(MULTI)SIG operation');
  }

  /**
   * Mines the pool into the next block (a coinbase claiming the subsidy and fees first) and adds
   * it to the chain: Core's verbosity-2 form in the chain, Blockbook's `bb_getBlock` form for the
   * stream (the `block` dataset of Bitcoin streams), spent outputs and addresses resolved.
   */
  produceBlock(timestampSec: number): ProducedBlock {
    const mined = this.pool.splice(0);
    this.poolSpends.clear();
    return this.mine(mined, timestampSec);
  }

  /**
   * Replaces the last `depth` produced blocks, as a reorg does: the UTXO set goes back to before
   * the first of them, they leave the chain (their hashes and transactions are no longer
   * served), and `depth` blocks with other hashes take their heights: their transactions mined
   * again in the first, or with `requeue` back in the mempool (the new blocks hold only their
   * coinbase; the transactions are mined one height on). Throws when fewer blocks are kept.
   */
  reorg(depth: number, timestampSec: number, opts: { requeue?: boolean } = {}): ReorgResult {
    const kept = this.history.length;
    if (!Number.isInteger(depth) || depth < 1 || depth > kept || this.history[kept - 1].height !== this.tipHeight()) {
      throw new Error(`a reorg of ${depth} block(s) needs as many produced blocks at the tip (${kept} kept)`);
    }
    const undone = this.history.splice(kept - depth);
    this.utxos.clear();
    for (const [k, v] of undone[0].before) this.utxos.set(k, v);
    const displaced = undone.map(({ height }) => {
      const hash = this.chain.hashes.get(height)!;
      const block = this.chain.blocks.get(hash)!;
      for (const t of block.tx as JsonObject[]) this.chain.txs.delete(String(t.txid));
      this.chain.blocks.delete(hash);
      this.chain.hashes.delete(height);
      return { number: height, hash, timestamp: Number(block.time) };
    });
    const parent = this.chain.blocks.get(this.chain.hashes.get(undone[0].height - 1) ?? '') ?? null;
    if (parent) delete parent.nextblockhash;
    this.chain.tip = parent;
    this.forks += 1;
    const txs = undone.flatMap((u) => u.mined);
    if (opts.requeue) {
      this.pool.unshift(...txs);
      for (const p of txs) for (const input of p.tx.ins) this.poolSpends.set(outpoint(hex(Buffer.from(input.hash).reverse()), input.index), p.txid);
    }
    const produced = undone.map((_, i) => this.mine(opts.requeue || i > 0 ? [] : txs, timestampSec));
    return { displaced, produced };
  }

  private mine(mined: Pooled[], timestampSec: number): ProducedBlock {
    const height = this.tipHeight() + 1;
    const parentHash = typeof this.chain.tip?.hash === 'string' ? this.chain.tip.hash : '0'.repeat(64);
    this.history.push({ height, before: new Map(this.utxos), mined });
    if (this.history.length > MAX_REORG_DEPTH) this.history.shift();
    const fees = mined.reduce((sum, p) => sum + p.fee, 0n);
    const coinbase = new Transaction();
    coinbase.version = 2;
    // BIP34: the coinbase starts with the height; after a reorg another miner's tag makes another block
    const tag = this.forks > 0 ? `chainpipe-sim/fork${this.forks}` : 'chainpipe-sim';
    coinbase.addInput(Buffer.alloc(32), 0xffffffff, 0xffffffff, script.compile([script.number.encode(height), Buffer.from(tag)]));
    coinbase.addOutput(payments.p2wpkh({ hash: Buffer.alloc(20, 0x5a), network: networks.bitcoin }).output!, SUBSIDY_SATS + fees);
    const txs = [coinbase, ...mined.map((p) => p.tx)];
    const header = new Block();
    header.version = 0x20000000;
    header.prevHash = Buffer.from(parentHash, 'hex').reverse();
    header.merkleRoot = Block.calculateMerkleRoot(txs);
    header.timestamp = timestampSec;
    header.bits = 0x17034219;
    header.nonce = 0;
    header.transactions = txs;
    const hash = header.getId();
    for (const p of mined) {
      for (const input of p.tx.ins) this.utxos.delete(outpoint(hex(Buffer.from(input.hash).reverse()), input.index));
      p.tx.outs.forEach((o, n) => {
        if (o.script[0] !== opcodes.OP_RETURN) this.utxos.set(outpoint(p.txid, n), { value: o.value, script: o.script, height });
      });
    }
    const decoded = txs.map((tx, i) => ({ ...decodedTx(tx), fee: i === 0 ? undefined : btc(mined[i - 1].fee) }));
    const block: JsonObject = {
      hash,
      height,
      version: header.version,
      versionHex: header.version.toString(16).padStart(8, '0'),
      merkleroot: hex(Buffer.from(header.merkleRoot).reverse()),
      time: timestampSec,
      mediantime: timestampSec,
      nonce: 0,
      bits: header.bits.toString(16),
      difficulty: 1,
      chainwork: '0'.repeat(64),
      nTx: txs.length,
      previousblockhash: parentHash,
      strippedsize: header.byteLength(false, false),
      size: header.byteLength(),
      weight: header.weight(),
      tx: decoded.map(({ fee, ...t }) => (fee === undefined ? t : { ...t, fee })),
    };
    const previous = this.chain.blocks.get(parentHash);
    if (previous) previous.nextblockhash = hash;
    this.chain.blocks.set(hash, block);
    this.chain.hashes.set(height, hash);
    this.chain.tip = block;
    for (const t of block.tx as JsonObject[]) this.chain.txs.set(String(t.txid), { tx: t, block });
    return { number: height, block, receipts: [], dataset: 'block', item: blockbookBlock(block, txs, [[], ...mined.map((p) => p.spent)]) };
  }
}

/**
 * A block as Blockbook's `bb_getBlock` gives it (what Bitcoin streams deliver): satoshi strings,
 * inputs with the address and value they spend, `vout` omitted for 0 as Go's `omitempty` does.
 */
function blockbookBlock(block: JsonObject, txs: Transaction[], spent: Coin[][]): JsonObject {
  const height = block.height as number;
  const time = block.time as number;
  return {
    page: 1,
    totalPages: 1,
    itemsOnPage: 1000,
    hash: block.hash,
    previousBlockHash: block.previousblockhash,
    height,
    confirmations: 1,
    size: block.size,
    time,
    version: block.version,
    merkleRoot: block.merkleroot,
    nonce: String(block.nonce),
    bits: block.bits,
    difficulty: String(block.difficulty),
    txCount: txs.length,
    txs: txs.map((tx, t) => {
      const valueIn = spent[t].reduce((sum, c) => sum + c.value, 0n);
      const value = tx.outs.reduce((sum, o) => sum + o.value, 0n);
      return {
        txid: tx.getId(),
        vin: tx.isCoinbase()
          ? [{ n: 0, coinbase: hex(tx.ins[0].script), isAddress: false }]
          : tx.ins.map((input, n) => {
              const address = addressOf(spent[t][n].script);
              return { txid: hex(Buffer.from(input.hash).reverse()), ...(input.index === 0 ? {} : { vout: input.index }), n, ...(address ? { addresses: [address], isAddress: true } : { isAddress: false }), value: spent[t][n].value.toString() };
            }),
        vout: tx.outs.map((o, n) => {
          const address = addressOf(o.script);
          const memo = opReturnText(o.script);
          return { value: o.value.toString(), n, hex: hex(o.script), ...(address ? { addresses: [address], isAddress: true } : { addresses: [memo !== undefined ? `OP_RETURN (${memo})` : 'OP_RETURN'], isAddress: false }) };
        }),
        blockHash: block.hash,
        blockHeight: height,
        confirmations: 1,
        blockTime: time,
        value: value.toString(),
        valueIn: tx.isCoinbase() ? '0' : valueIn.toString(),
        fees: tx.isCoinbase() ? '0' : (valueIn - value).toString(),
      };
    }),
  };
}
