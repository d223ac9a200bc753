import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519';
import { secp256k1 } from '@noble/curves/secp256k1';
import { Transaction, address as btcAddress, networks, payments, script } from 'bitcoinjs-lib';
import { keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base58Encode, tronHexToBase58 } from '@chainpipe/chains';
import type { BitcoinLedger } from '../chain-nodes/bitcoin-ledger';
import type { EvmLedger } from '../chain-nodes/evm-ledger';
import type { SolanaLedger } from '../chain-nodes/solana-ledger';
import type { ChainNodes } from '../chain-nodes/nodes';
import type { TronLedger } from '../chain-nodes/tron-ledger';

/** ChangeNOW network names of the EVM networks → their chain ids. */
export const CHANGENOW_EVM_CHAIN_IDS: Readonly<Record<string, number>> = { eth: 1, bsc: 56, matic: 137, arbitrum: 42161, op: 10, base: 8453, cchain: 43114 };

/** A payin address of ChangeNOW's own wallet: the stand-in holds its key, so a refund can leave it on the chain. */
export interface PayinWallet {
  address: string;
  key: Uint8Array;
}

/** What the ChangeNOW stand-in needs of a simulated chain for its payins: a wallet, its balance, a refund from it. */
export interface PayinChain {
  /** Decimals of the native coin (its payins are in the smallest unit). */
  decimals: number;
  newWallet(): PayinWallet;
  /** What the address holds on the chain (mined). */
  balanceOf(address: string): bigint;
  /** Sends what the payin brought back to `to`, less the network fee; its hash and value, or undefined when the fee takes it all. */
  sendBack(wallet: PayinWallet, to: string, received: bigint): Promise<{ hash: string; value: bigint } | undefined>;
}

/** An EVM chain's payins: a plain transfer of the payin less 21 000 gas at twice the gas price. */
export function evmPayinChain(ledger: EvmLedger, chainId: number): PayinChain {
  return {
    decimals: 18,
    newWallet() {
      const key = randomBytes(32);
      return { key, address: privateKeyToAccount(toHex(key)).address.toLowerCase() };
    },
    balanceOf: (address) => ledger.balanceOf(address),
    async sendBack(wallet, to, received) {
      const maxFeePerGas = ledger.gasPrice() * 2n;
      const value = received - 21_000n * maxFeePerGas;
      if (value <= 0n) return undefined;
      const raw = await privateKeyToAccount(toHex(wallet.key)).signTransaction({
        type: 'eip1559', chainId, nonce: ledger.nonceOf(wallet.address, true), to: to as Hex, value, gas: 21_000n, maxFeePerGas, maxPriorityFeePerGas: maxFeePerGas / 2n,
      });
      return { hash: ledger.submitRaw(raw), value };
    },
  };
}

/** The mainnet P2WPKH address of a secp256k1 key (BIP84: witness v0 of the compressed key's hash160). */
function bitcoinAddressOf(key: Uint8Array): string {
  return payments.p2wpkh({ pubkey: secp256k1.getPublicKey(key, true), network: networks.bitcoin }).address!;
}

/**
 * The virtual size (BIP141: ⌈(4 × non-witness bytes + witness bytes) / 4⌉) of a transaction
 * spending `inputs` P2WPKH outputs to one output of `outputScript`, with the largest low-S
 * signature (72 bytes with its sighash byte), so the fee at a rate covers the signed transaction.
 */
function p2wpkhSpendVsize(inputs: number, outputScript: Uint8Array): number {
  const nonWitness = 4 + 1 + inputs * (32 + 4 + 1 + 4) + 1 + 8 + 1 + outputScript.length + 4;
  const witness = 2 + inputs * (1 + 1 + 72 + 1 + 33);
  return Math.ceil((4 * nonWitness + witness) / 4);
}

/** A version-2 transaction spending every output in `utxos` (P2WPKH of `key`) to `outputScript`, each input signed SIGHASH_ALL over its BIP143 digest. */
function signedP2wpkhSpend(key: Uint8Array, utxos: readonly { txid: string; vout: number; value: bigint }[], outputScript: Uint8Array, value: bigint): string {
  const pubkey = secp256k1.getPublicKey(key, true);
  const tx = new Transaction();
  tx.version = 2;
  for (const u of utxos) tx.addInput(Buffer.from(u.txid, 'hex').reverse(), u.vout);
  tx.addOutput(outputScript, value);
  // BIP143: a P2WPKH input's script code is the P2PKH script of its key hash
  const scriptCode = payments.p2pkh({ pubkey, network: networks.bitcoin }).output!;
  utxos.forEach((u, i) => {
    const digest = tx.hashForWitnessV0(i, scriptCode, u.value, Transaction.SIGHASH_ALL);
    const signature = secp256k1.sign(digest, key, { lowS: true }).toCompactRawBytes();
    tx.setWitness(i, [script.signature.encode(signature, Transaction.SIGHASH_ALL), pubkey]);
  });
  return tx.toHex();
}

/**
 * Bitcoin's payins: a P2WPKH payin address; a refund spends all its outputs to the refund
 * address, less the fee at the node's estimate for that size (no change).
 */
export function bitcoinPayinChain(ledger: BitcoinLedger): PayinChain {
  return {
    decimals: 8,
    newWallet() {
      const key = randomBytes(32);
      return { key, address: bitcoinAddressOf(key) };
    },
    balanceOf: (address) => ledger.unspentOf(address).reduce((sum, u) => sum + u.value, 0n),
    async sendBack(wallet, to, _received) {
      const utxos = ledger.unspentOf(wallet.address);
      const total = utxos.reduce((sum, u) => sum + u.value, 0n);
      const outputScript = btcAddress.toOutputScript(to, networks.bitcoin);
      const fee = ledger.feeRateSatVb * BigInt(p2wpkhSpendVsize(utxos.length, outputScript));
      if (utxos.length === 0 || total - fee <= 0n) return undefined;
      return { hash: ledger.submitRaw(signedP2wpkhSpend(wallet.key, utxos, outputScript, total - fee)), value: total - fee };
    },
  };
}

/**
 * Solana's payins: an address of an ed25519 key of the stand-in's; its refunds stay off the chain
 * (the exchange shows a refund hash the chain does not know).
 */
export function solanaPayinChain(ledger: SolanaLedger): PayinChain {
  return {
    decimals: 9,
    newWallet() {
      const key = randomBytes(32);
      // a Solana address is the base58 of the ed25519 public key
      return { key, address: base58Encode(ed25519.getPublicKey(key)) };
    },
    balanceOf: (address) => ledger.balanceOf(address),
    sendBack: async () => undefined,
  };
}

/** A Tron address of a secp256k1 key: 0x41 and the last 20 bytes of the uncompressed key's keccak-256, in Base58Check. */
function tronAddressOf(key: Uint8Array): string {
  const hash = keccak256(secp256k1.getPublicKey(key, false).subarray(1));
  return tronHexToBase58(`41${hash.slice(-40)}`)!;
}

/**
 * Tron's payins: a payin account of the stand-in's key; a refund is a TRX transfer built, signed
 * and broadcast through the node's own API, of the payin less 1.1 TRX (the bandwidth it may burn
 * and the activation of a refund address new to the chain).
 */
export function tronPayinChain(ledger: TronLedger): PayinChain {
  const wallet = ledger.methods();
  const call = (method: string, args: Record<string, unknown>) => wallet.get(method)!(args).body as Record<string, any>;
  return {
    decimals: 6,
    newWallet() {
      const key = randomBytes(32);
      return { key, address: tronAddressOf(key) };
    },
    balanceOf: (address) => ledger.balanceOf(address),
    async sendBack(payin, to, received) {
      const value = received - 1_100_000n;
      if (value <= 0n) return undefined;
      const built = call('createtransaction', { owner_address: payin.address, to_address: to, amount: Number(value), visible: true });
      // java-tron's signature: r ‖ s ‖ the recovery id, over the txID (the raw data's sha256)
      const sig = secp256k1.sign(String(built.txID), payin.key, { lowS: true });
      const signature = `${sig.r.toString(16).padStart(64, '0')}${sig.s.toString(16).padStart(64, '0')}0${sig.recovery}`;
      const answer = call('broadcasttransaction', { ...built, signature: [signature] });
      return answer.result === true ? { hash: built.txID, value } : undefined;
    },
  };
}

/** The simulated chain of a ChangeNOW network (EVM mainnets, `btc`, `sol`, `trx`), for the stand-in's payins and refunds. */
export function payinChainOf(chainNodes: ChainNodes): (network: string) => PayinChain | undefined {
  return (network) => {
    if (network === 'sol') {
      const ledger = chainNodes.nodes.get('solana-mainnet')?.solanaLedger;
      return ledger ? solanaPayinChain(ledger) : undefined;
    }
    if (network === 'btc') {
      const ledger = chainNodes.nodes.get('bitcoin-mainnet')?.bitcoinLedger;
      return ledger ? bitcoinPayinChain(ledger) : undefined;
    }
    if (network === 'trx') {
      const ledger = chainNodes.nodes.get('tron-mainnet')?.tronLedger;
      return ledger ? tronPayinChain(ledger) : undefined;
    }
    const chainId = CHANGENOW_EVM_CHAIN_IDS[network];
    if (chainId === undefined) return undefined;
    for (const node of chainNodes.nodes.values()) {
      if (node.ledger && node.network.chainId === chainId && !node.network.testnet) return evmPayinChain(node.ledger, chainId);
    }
    return undefined;
  };
}
