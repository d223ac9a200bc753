import { randomBytes } from 'node:crypto';
import { toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SingleKeySigner, outputScriptOf, p2wpkhVsize, shapeBitcoinTransfer, signBitcoinTransfer, solanaAddressOf, solanaPublicKeyOf } from '@chainpipe/custody';
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

/**
 * Bitcoin's payins: a P2WPKH payin address; a refund spends all its outputs to the refund
 * address, less the fee at the node's estimate for that size (no change).
 */
export function bitcoinPayinChain(ledger: BitcoinLedger): PayinChain {
  return {
    decimals: 8,
    newWallet() {
      const key = randomBytes(32);
      return { key, address: new SingleKeySigner('utxo', key).address };
    },
    balanceOf: (address) => ledger.unspentOf(address).reduce((sum, u) => sum + u.value, 0n),
    async sendBack(wallet, to, _received) {
      const utxos = ledger.unspentOf(wallet.address);
      const total = utxos.reduce((sum, u) => sum + u.value, 0n);
      const fee = ledger.feeRateSatVb * BigInt(p2wpkhVsize(utxos.length, [outputScriptOf(to)]));
      if (utxos.length === 0 || total - fee <= 0n) return undefined;
      const signer = new SingleKeySigner('utxo', wallet.key);
      const shape = shapeBitcoinTransfer({ utxos, from: wallet.address, to, value: total - fee, fee });
      const { raw } = await signBitcoinTransfer(signer, { index: 0, address: wallet.address }, shape);
      return { hash: ledger.submitRaw(raw), value: total - fee };
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
      return { key, address: solanaAddressOf(solanaPublicKeyOf(key)) };
    },
    balanceOf: (address) => ledger.balanceOf(address),
    sendBack: async () => undefined,
  };
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
      return { key, address: new SingleKeySigner('tvm', key).address };
    },
    balanceOf: (address) => ledger.balanceOf(address),
    async sendBack(payin, to, received) {
      const value = received - 1_100_000n;
      if (value <= 0n) return undefined;
      const built = call('createtransaction', { owner_address: payin.address, to_address: to, amount: Number(value), visible: true });
      const [sig] = await new SingleKeySigner('tvm', payin.key).sign({ family: 'tvm', index: 0, address: payin.address, digests: [built.txID] });
      const answer = call('broadcasttransaction', { ...built, signature: [`${sig.r}${sig.s}0${sig.recovery}`] });
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
