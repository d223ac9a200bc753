import { parseGwei, type Hex, type LocalAccount } from 'viem';
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
  const rpc = async (method: string, params: unknown[]) => {
    const res = await fetch(`${base()}/rpc/${network}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: any; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
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
