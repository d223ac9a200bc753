import { parseGwei, type Hex, type LocalAccount } from 'viem';
import { TronSender, signSolanaTransfer, transferCalldata, type DepositKeyRef, type Signer } from '@chainpipe/custody';
import { waitFor } from './wait';

/** A simulated EVM chain of upstream-sim, as a wallet sees it over JSON-RPC. */
export interface SimChain {
  /** A JSON-RPC call; the answer's result, or an error named by the method when the node refuses. */
  rpc(method: string, params: unknown[]): Promise<any>;
  /** Waits (20 s at most) until the transaction is mined with status success. */
  mined(hash: string): Promise<void>;
  /** Signs and sends `value` (and calldata) from `from`, waits until it is mined; its hash. */
  pay(from: LocalAccount, to: string, value: bigint, opts?: { data?: Hex; gas?: bigint }): Promise<string>;
}

/** `base`: the simulator's URL, read at each call (suites learn it in their `before`). */
export function simChain(base: () => string, network = 'ethereum-mainnet', chainId = 1): SimChain {
  const rpc = simRpc(base, network);
  const mined = async (hash: string): Promise<void> => {
    await waitFor(async () => (await rpc('eth_getTransactionReceipt', [hash]))?.status === '0x1', { timeoutMs: 20_000, what: `${hash} mined` });
  };
  return {
    rpc,
    mined,
    async pay(from, to, value, opts = {}) {
      const nonce = Number(await rpc('eth_getTransactionCount', [from.address, 'pending']));
      const raw = await from.signTransaction!({ chainId, type: 'eip1559', to: to as Hex, value, data: opts.data, nonce, gas: opts.gas ?? 21_000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') });
      const hash: string = await rpc('eth_sendRawTransaction', [raw]);
      await mined(hash);
      return hash;
    },
  };
}

/** A JSON-RPC call to a network of the simulator; the result, or an error named by the method (Bitcoin Core's clients speak `1.0`). */
export function simRpc(base: () => string, network: string, jsonrpc: '1.0' | '2.0' = '2.0'): (method: string, params: unknown[]) => Promise<any> {
  return async (method, params) => {
    const res = await fetch(`${base()}/rpc/${network}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc, id: 1, method, params }) });
    const body = (await res.json()) as { result?: any; error?: { message: string } | null };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
}

/** The simulator's Solana mainnet, as a wallet sees it over JSON-RPC. */
export interface SimSolana {
  rpc(method: string, params: unknown[]): Promise<any>;
  /** Waits (20 s at most) until the transaction is in a slot, successful. */
  landed(signature: string): Promise<void>;
  /** The lamports an address holds. */
  balanceOf(address: string): Promise<bigint>;
  /** Sends `lamports` from the key of `from` (a signer's index and address), waits until it landed; its signature. */
  pay(signer: Signer, from: { index: number; address: string }, to: string, lamports: bigint): Promise<string>;
}

export function simSolana(base: () => string, network = 'solana-mainnet'): SimSolana {
  const rpc = simRpc(base, network);
  const landed = async (signature: string): Promise<void> => {
    await waitFor(async () => {
      const [status] = (await rpc('getSignatureStatuses', [[signature]])).value;
      return status !== null && status.err === null;
    }, { timeoutMs: 20_000, what: `${signature} landed` });
  };
  return {
    rpc,
    landed,
    balanceOf: async (address) => BigInt((await rpc('getBalance', [address])).value),
    async pay(signer, from, to, lamports) {
      const { blockhash, lastValidBlockHeight } = (await rpc('getLatestBlockhash', [])).value;
      const { raw, hash } = await signSolanaTransfer(signer, from, to, lamports, { maxNetworkFee: 5000n, blockhash, lastValidBlockHeight });
      const signature: string = await rpc('sendTransaction', [raw, { encoding: 'base64' }]);
      await landed(signature);
      if (signature !== hash) throw new Error(`the node named ${signature}, not ${hash}`);
      return signature;
    },
  };
}

/** The simulated Tron of upstream-sim, as a wallet sees it over java-tron's HTTP API. */
export interface SimTron {
  /** A `/wallet/<method>` call; its answer. */
  wallet(method: string, body: Record<string, unknown>): Promise<any>;
  /** Waits (20 s at most) until the transaction is in a block; its transaction info. */
  mined(txId: string): Promise<any>;
  /** Sends `amount` sun (with `token`: of that TRC-20 token) from a key of the signer, waits until it is mined; its txID. */
  pay(from: DepositKeyRef, to: string, amount: bigint, token?: string): Promise<string>;
}

/** `base`: the simulator's URL, read at each call; `signer` holds the paying keys (family `tvm`). */
export function simTron(base: () => string, signer: Signer): SimTron {
  const origin = () => `${base()}/rpc/tron-mainnet`;
  const wallet = async (method: string, body: Record<string, unknown>) => (await (await fetch(`${origin()}/wallet/${method}`, { method: 'POST', body: JSON.stringify(body) })).json()) as any;
  const mined = (txId: string) => waitFor(async () => {
    const info = await wallet('gettransactioninfobyid', { value: txId });
    return typeof info.blockNumber === 'number' ? info : undefined;
  }, { timeoutMs: 20_000, what: `${txId} mined` });
  return {
    wallet,
    mined,
    async pay(from, to, amount, token) {
      const sender = new TronSender({ url: origin(), timeoutMs: 10_000 }, signer);
      const { raw, hash } = await sender.sign(from, token ? { to: token, value: 0n, data: transferCalldata(to, amount) } : { to, value: amount });
      await sender.broadcast(raw, hash);
      await mined(hash);
      return hash;
    },
  };
}
