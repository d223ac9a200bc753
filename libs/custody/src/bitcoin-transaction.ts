import { secp256k1 } from '@noble/curves/secp256k1';
import { Transaction, address as btcAddress, networks, opcodes, payments, script } from 'bitcoinjs-lib';
import type { DepositKeyRef } from './evm-transaction';
import type { FeePlan } from './outgoing-transfers';
import type { Signer } from './signer';

/** An unspent output of a deposit address: where it is and what it holds (satoshis). */
export interface BitcoinUtxo {
  txid: string;
  vout: number;
  value: bigint;
}

/** What a Bitcoin transfer will cost at most: its estimated virtual size at a fee rate (maxNetworkFee = feeRate × vsize). */
export interface BitcoinFeePlan extends FeePlan {
  /** Satoshis per virtual byte. */
  feeRate: bigint;
  /** The transaction's virtual size with the largest signatures (BIP141), for the inputs it was planned on. */
  vsize: number;
}

export function isBitcoinFeePlan(plan: FeePlan | undefined): plan is BitcoinFeePlan {
  return plan !== undefined && 'feeRate' in plan && 'vsize' in plan;
}

/** THORChain reads a Bitcoin memo from one OP_RETURN output; standard relay policy carries at most 80 bytes of data there. */
export const MAX_OP_RETURN_BYTES = 80;

/** The OP_RETURN output script carrying `memo` (UTF-8). */
export function memoScript(memo: string): Uint8Array {
  const data = new TextEncoder().encode(memo);
  if (data.length === 0) throw new Error('an empty memo');
  if (data.length > MAX_OP_RETURN_BYTES) throw new Error(`the memo is ${data.length} bytes: an OP_RETURN carries ${MAX_OP_RETURN_BYTES} at most`);
  return script.compile([opcodes.OP_RETURN, data]);
}

/** The output script paying a mainnet address (P2PKH, P2SH, P2WPKH, P2WSH, P2TR). */
export function outputScriptOf(address: string): Uint8Array {
  return btcAddress.toOutputScript(address, networks.bitcoin);
}

const varIntSize = (n: number) => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

/**
 * Core's dust threshold at the default dust relay fee (3 sat/vB): an output worth less than
 * spending it costs is not relayed. The output's own size plus the input that would spend it
 * (a witness program: 32 + 4 + 1 + 107/4 + 4 bytes; else 32 + 4 + 1 + 107 + 4); OP_RETURN has none.
 */
export function dustThreshold(outputScript: Uint8Array): bigint {
  if (outputScript[0] === opcodes.OP_RETURN) return 0n;
  const outputSize = 8 + varIntSize(outputScript.length) + outputScript.length;
  const witnessProgram = outputScript.length >= 4 && outputScript.length <= 42 && (outputScript[0] === 0 || (outputScript[0] >= 0x51 && outputScript[0] <= 0x60)) && outputScript[1] + 2 === outputScript.length;
  const spend = witnessProgram ? 32 + 4 + 1 + Math.floor(107 / 4) + 4 : 32 + 4 + 1 + 107 + 4;
  return BigInt(outputSize + spend) * 3n;
}

/**
 * The virtual size (BIP141: weight = 4 × non-witness bytes + witness bytes, vsize = ⌈weight / 4⌉)
 * of a transaction spending `inputs` P2WPKH outputs to `outputScripts`, with the largest low-S
 * signature (72 bytes with its sighash byte), so the fee of the estimate always covers the signed one.
 */
export function p2wpkhVsize(inputs: number, outputScripts: readonly Uint8Array[]): number {
  // version, input count, per input outpoint 36 + empty scriptSig 1 + sequence 4, output count, outputs, locktime
  const base = 4 + varIntSize(inputs) + inputs * (36 + 1 + 4) + varIntSize(outputScripts.length) + outputScripts.reduce((sum, s) => sum + 8 + varIntSize(s.length) + s.length, 0) + 4;
  // marker and flag, then per input: 2 stack items, the signature (1 + 72), the compressed key (1 + 33)
  const witness = 2 + inputs * (1 + 1 + 72 + 1 + 33);
  return Math.ceil((base * 4 + witness) / 4);
}

export interface BitcoinTransferRequest {
  utxos: readonly BitcoinUtxo[];
  /** The deposit address spent from; change goes back to it. */
  from: string;
  to: string;
  value: bigint;
  /** THORChain's memo, as an OP_RETURN output after the payment. */
  memo?: string;
  /** The network fee the transaction pays (satoshis). */
  fee: bigint;
}

export interface BitcoinTransferShape {
  inputs: BitcoinUtxo[];
  outputs: { script: Uint8Array; value: bigint }[];
  /** What goes back to the deposit address (0: no change output, a dust remainder went to the fee). */
  change: bigint;
  /** What the transaction pays the network: inputs − outputs. */
  fee: bigint;
}

/**
 * Which outputs a transfer spends and makes: every unspent output of the deposit address (so
 * none is left stranded under its own cost), `value` to `to`, the memo, and the rest less the fee
 * back to the deposit address, unless that rest is dust (then the network takes it).
 */
export function shapeBitcoinTransfer(req: BitcoinTransferRequest): BitcoinTransferShape {
  if (req.utxos.length === 0) throw new Error(`${req.from} has no unspent outputs`);
  const toScript = outputScriptOf(req.to);
  if (req.value < dustThreshold(toScript)) throw new Error(`${req.value} sat to ${req.to} is under the dust threshold ${dustThreshold(toScript)}`);
  const total = req.utxos.reduce((sum, u) => sum + u.value, 0n);
  const rest = total - req.value - req.fee;
  if (rest < 0n) throw new Error(`insufficient funds: ${req.from} holds ${total} sat, the transfer needs ${req.value} + network fee ${req.fee}`);
  const outputs = [{ script: toScript, value: req.value }];
  if (req.memo !== undefined) outputs.push({ script: memoScript(req.memo), value: 0n });
  const changeScript = outputScriptOf(req.from);
  const change = rest >= dustThreshold(changeScript) ? rest : 0n;
  if (change > 0n) outputs.push({ script: changeScript, value: change });
  return { inputs: [...req.utxos], outputs, change, fee: total - req.value - change };
}

/**
 * Builds the transaction of `shape`, has the signer sign each input's BIP143 sighash
 * (SIGHASH_ALL) with the key of the deposit index, and puts the DER signatures with the public
 * key (recovered from the first signature, and checked to own the address) into the witnesses.
 * The raw transaction and its txid.
 */
export async function signBitcoinTransfer(signer: Signer, from: DepositKeyRef, shape: BitcoinTransferShape, signal?: AbortSignal): Promise<{ raw: string; hash: string }> {
  const spent = payments.p2wpkh({ address: from.address, network: networks.bitcoin });
  // BIP143: the script code of a P2WPKH input is the P2PKH script of its key hash
  const scriptCode = payments.p2pkh({ hash: spent.hash!, network: networks.bitcoin }).output!;
  const tx = new Transaction();
  tx.version = 2;
  for (const u of shape.inputs) tx.addInput(Buffer.from(u.txid, 'hex').reverse(), u.vout, 0xfffffffd);
  for (const o of shape.outputs) tx.addOutput(o.script, o.value);
  const digests = shape.inputs.map((u, i) => Buffer.from(tx.hashForWitnessV0(i, scriptCode, u.value, Transaction.SIGHASH_ALL)).toString('hex'));
  const signatures = await signer.sign({ family: 'utxo', index: from.index, address: from.address, digests }, signal);
  const first = new secp256k1.Signature(BigInt(`0x${signatures[0].r}`), BigInt(`0x${signatures[0].s}`)).addRecoveryBit(signatures[0].recovery);
  const pubkey = first.recoverPublicKey(digests[0]).toRawBytes(true);
  if (payments.p2wpkh({ pubkey, network: networks.bitcoin }).address !== from.address) throw new Error(`the signature of input 0 is not by the key of ${from.address}`);
  signatures.forEach((sig, i) => {
    const compact = Buffer.from(sig.r + sig.s, 'hex');
    tx.setWitness(i, [script.signature.encode(compact, Transaction.SIGHASH_ALL), pubkey]);
  });
  return { raw: tx.toHex(), hash: tx.getId() };
}
