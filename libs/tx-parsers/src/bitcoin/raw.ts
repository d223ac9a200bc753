import type { Block, Transaction } from 'bitcoinjs-lib';
import { normalizeAddress } from '@chainpipe/chains';
import type { BlockRef } from '../types';
import type { UtxoInput, UtxoOutput, UtxoTx } from './model';

/**
 * Raw Bitcoin serializations, decoded with bitcoinjs-lib: `getblock <hash> 0` (a block's hex)
 * and non-verbose `getrawtransaction` (a transaction's hex). Raw data names no prevout, so input
 * addresses and values are unknown here (and with them the fee) until they are resolved from
 * stored outputs (`resolveInputs`).
 */

type BitcoinJs = typeof import('bitcoinjs-lib');
let loaded: BitcoinJs | undefined;
/**
 * bitcoinjs-lib, loaded on the first raw payload: every app that parses (the gateway's origin
 * fetch too) would otherwise pay its load time at boot for a format few deliveries use.
 */
function btc(): BitcoinJs {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('bitcoinjs-lib') as BitcoinJs;
  return loaded;
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
/** 4 MWU: no valid block serializes larger than 4 MB. */
const MAX_BLOCK_HEX = 2 * 4_000_000;
const HEADER_BYTES = 80;

export function looksLikeRawHex(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 20 && v.length <= MAX_BLOCK_HEX && HEX.test(v);
}

/** Little-endian hash bytes (as serialized) → the usual big-endian hex of ids. */
function idHex(bytes: Uint8Array | undefined): string | null {
  if (!bytes || bytes.length !== 32) return null;
  return Buffer.from(bytes).reverse().toString('hex');
}

/**
 * The address of an output script as Bitcoin Core names it: P2PKH, P2SH, P2WPKH, P2WSH (and
 * other witness programs) through bitcoinjs-lib's `fromOutputScript`; P2TR (witness v1, 32
 * bytes) through its bech32m encoder, since its payment check needs an elliptic-curve library
 * for a key that the address does not depend on. P2PK (pay to a bare public key, the early
 * coinbases) is named by its key's P2PKH address, as Core before v22 and Blockbook name it, so
 * its owner finds it under the address they know. Anything else (bare multisig, OP_RETURN) has
 * no address: null.
 */
export function scriptAddress(script: Uint8Array): string | null {
  const { address: btcAddress, networks, payments } = btc();
  if (script.length === 34 && script[0] === 0x51 && script[1] === 0x20) {
    return btcAddress.toBech32(script.subarray(2), 1, networks.bitcoin.bech32);
  }
  try {
    return normalizeAddress('utxo', btcAddress.fromOutputScript(script, networks.bitcoin));
  } catch {
    // not a standard address script; maybe P2PK
  }
  try {
    const { pubkey } = payments.p2pk({ output: script });
    return pubkey ? (payments.p2pkh({ pubkey, network: networks.bitcoin }).address ?? null) : null;
  } catch {
    return null;
  }
}

export function readRawTx(tx: Transaction): UtxoTx {
  const coinbase = tx.isCoinbase();
  const inputs: UtxoInput[] = coinbase
    ? []
    : tx.ins.map((input) => ({ address: null, amount: null, prevTxid: idHex(input.hash), prevVout: input.index }));
  const outputs: UtxoOutput[] = tx.outs.map((out, index) => ({ address: scriptAddress(out.script), amount: BigInt(out.value), index }));
  return { txid: tx.getId(), version: tx.version, coinbase, inputs, outputs, reportedFee: null };
}

export type RawDecoded =
  | { kind: 'block'; ref: BlockRef; txs: UtxoTx[] }
  | { kind: 'tx'; tx: UtxoTx }
  | { kind: 'error'; reason: string };

/**
 * BIP34: the coinbase script of a block of version 2 or more starts with a push of the height
 * (version-1 blocks start with anything). Only a minimal push of 1–4 bytes is read; else the
 * height stays unknown.
 */
function bip34Height(block: Block): number | null {
  if (block.version < 2) return null;
  const sig = block.transactions?.[0]?.ins[0]?.script;
  if (!sig || sig.length < 2) return null;
  const len = sig[0];
  if (len < 1 || len > 4 || sig.length < 1 + len) return null;
  try {
    const n = btc().script.number.decode(Buffer.from(sig.subarray(1, 1 + len)), 4);
    return Number.isSafeInteger(n) && n >= 0 ? n : null;
  } catch {
    return null;
  }
}

/**
 * A raw hex string is a block when it parses as one whose merkle root matches its transactions
 * (an 80-byte header cannot be mistaken for a transaction that way); otherwise a transaction.
 */
export function decodeRaw(hex: string): RawDecoded {
  if (hex.length > HEADER_BYTES * 2) {
    let block: Block | null = null;
    try {
      block = btc().Block.fromHex(hex);
    } catch {
      block = null;
    }
    if (block && block.transactions && block.transactions.length > 0 && block.checkTxRoots()) {
      const txs = block.transactions.map(readRawTx);
      // Raw blocks carry no height: BIP34's coinbase height, else the batch's range fills it in.
      return { kind: 'block', ref: { height: bip34Height(block), hash: block.getId(), parent_hash: idHex(block.prevHash), time: block.timestamp }, txs };
    }
  }
  try {
    return { kind: 'tx', tx: readRawTx(btc().Transaction.fromHex(hex)) };
  } catch (e) {
    return { kind: 'error', reason: `not a raw Bitcoin block or transaction: ${(e as Error).message.slice(0, 200)}` };
  }
}
