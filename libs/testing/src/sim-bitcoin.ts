import { BitcoinSender, SingleKeySigner, rootOfMnemonic, type Signer } from '@chainpipe/custody';
import { simRpc } from './sim-chain';
import { waitFor } from './wait';

/** A user's P2WPKH wallet: its address, and a Signer of its one key (as a wallet signs its inputs). */
export interface BitcoinWallet {
  address: string;
  signer: Signer;
}

/**
 * The wallet of a mnemonic's BIP84 account `account`, first receive address (m/84'/0'/account'/0/0):
 * account 1 is apart from the platform's deposit keys (account 0), as the EVM payer is.
 */
export function bitcoinWallet(mnemonic: string, account = 1): BitcoinWallet {
  const signer = new SingleKeySigner('utxo', rootOfMnemonic(mnemonic).derive(`m/84'/0'/${account}'/0/0`).privateKey!);
  return { address: signer.address, signer };
}

/** The simulated Bitcoin mainnet of upstream-sim, as a wallet sees it over Core's JSON-RPC. */
export interface SimBitcoin {
  /** A JSON-RPC call; the answer's result, or an error named by the method when the node refuses. */
  rpc(method: string, params: unknown[]): Promise<any>;
  /** Waits (20 s at most) until the transaction is in a block; Core's verbose form of it. */
  mined(txid: string): Promise<any>;
  /** Pays `value` (and an OP_RETURN memo) from the wallet, all its outputs spent, the rest back to it; waits until mined; the txid. */
  pay(wallet: BitcoinWallet, to: string, value: bigint, opts?: { memo?: string }): Promise<string>;
}

/** `base`: the simulator's URL, read at each call (suites learn it in their `before`). */
export function simBitcoin(base: () => string): SimBitcoin {
  const rpc = simRpc(base, 'bitcoin-mainnet', '1.0');
  const mined = (txid: string) =>
    waitFor(
      async () => {
        const tx = await rpc('getrawtransaction', [txid, true]).catch(() => undefined);
        return tx?.confirmations >= 1 ? tx : undefined;
      },
      { timeoutMs: 20_000, what: `${txid} mined` },
    );
  return {
    rpc,
    mined,
    async pay(wallet, to, value, opts = {}) {
      // the wallet builds and signs as the platform's sender does: the same BIP143 inputs, memo output and change
      const sender = new BitcoinSender({ url: `${base()}/rpc/bitcoin-mainnet`, timeoutMs: 10_000, confTarget: 2, minFeeRate: 1n }, wallet.signer);
      const { raw, hash } = await sender.sign({ index: 0, address: wallet.address }, { to, value, memo: opts.memo });
      await sender.broadcast(raw, hash);
      await mined(hash);
      return hash;
    },
  };
}
