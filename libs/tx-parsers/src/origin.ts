import { OriginError, type NetworkInfo } from '@chainpipe/chains';
import { type Clock, systemClock } from '@chainpipe/runtime/pure';
import { parseBitcoinPayload } from './bitcoin';
import { parseEvmPayload } from './evm';
import { parseSolanaPayload } from './solana';
import { parseTronPayload } from './tron';
import type { ChainContext, NormalizedTx, ParseResult } from './types';

/**
 * Fetching one transaction from its chain's node when the store does not have it (or the caller
 * asked for `no_cache`). Each family asks its node what our parsers read, then parses the answer
 * with the same parser the streamed blocks go through, so a fetched record equals a streamed one:
 * - EVM: eth_getTransactionByHash, then eth_getTransactionReceipt and
 *   eth_getBlockByNumber(n, false) in parallel, assembled as `{block: {header, transactions:
 *   [tx]}, receipts: [receipt]}`; a transaction not yet in a block is parsed alone (`pending`).
 *   No traces are asked for, so internal transactions of a fetched record stay empty.
 * - Tron: the same three calls on the node's eth-compatible JSON-RPC view (hash `0x` + txID).
 * - Solana: getTransaction(signature, {encoding, maxSupportedTransactionVersion: 0}), `jsonParsed`
 *   unless `options.solanaEncoding` says otherwise: the parser reads `json` and the binary
 *   `base64` / `base58` answers too (wire bytes decoded to the `json` shape) and gives the same
 *   record for each; jsonParsed stays the default because every Solana RPC provider serves it.
 * - Bitcoin: getrawtransaction(txid, true), plus getblockheader for the height when mined.
 * "Not found" is the node's null result (Bitcoin Core: RPC error -5). Every call shares one
 * deadline, so a slow node costs at most `timeoutMs` in total, never a hang.
 */

/** One JSON-RPC call to the network's node; rejects with OriginError. */
export type RpcCall = (method: string, params: unknown[], timeoutMs: number) => Promise<unknown>;

/** The getTransaction encodings the Solana parser reads. */
export type SolanaOriginEncoding = 'jsonParsed' | 'json' | 'base64' | 'base58';

export interface OriginOptions {
  /** Default `jsonParsed`. */
  solanaEncoding?: SolanaOriginEncoding;
}

export type OriginLookup = { found: false } | { found: true; tx: NormalizedTx };

const NOT_FOUND: OriginLookup = { found: false };
/** Bitcoin Core: "No such mempool or blockchain transaction". */
const BITCOIN_NO_SUCH_TX = -5;

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function contextOf(network: NetworkInfo): ChainContext {
  return {
    chainType: network.chainType,
    chainId: network.chainId,
    family: network.family,
    nativeSymbol: network.nativeSymbol,
    nativeDecimals: network.nativeDecimals,
  };
}

/** Calls sharing one deadline: each gets what is left of it. */
function withDeadline(call: RpcCall, timeoutMs: number, clock: Pick<Clock, 'now'>): (method: string, params: unknown[]) => Promise<unknown> {
  const deadline = clock.now() + timeoutMs;
  return (method, params) => {
    const left = deadline - clock.now();
    if (left <= 0) return Promise.reject(new OriginError(`origin did not answer within ${timeoutMs} ms`, 'timeout'));
    return call(method, params, left);
  };
}

/** The parsed record of `txHash`, or an OriginError naming why the answer was unusable. */
function pick(result: ParseResult, txHash: string): NormalizedTx {
  for (const block of result.blocks) {
    for (const tx of block.transactions) if (tx.tx_hash === txHash) return tx;
  }
  const why = result.issues.map((i) => i.reason).slice(0, 3).join('; ');
  throw new OriginError(`origin answer for ${txHash} could not be parsed${why ? `: ${why}` : ''}`, 'invalid');
}

/**
 * An eth-style node (EVM chains, Tron's JSON-RPC view): the payload element our EVM and Tron
 * parsers accept for one transaction, or null when the node does not know the hash.
 */
async function ethStyleItem(rpc: (m: string, p: unknown[]) => Promise<unknown>, hash: string): Promise<unknown | null> {
  const tx = await rpc('eth_getTransactionByHash', [hash]);
  if (tx === null || tx === undefined) return null;
  if (!isObj(tx)) throw new OriginError('origin answered eth_getTransactionByHash with something that is not a transaction', 'invalid');
  if (tx.blockNumber === null || tx.blockNumber === undefined) return tx; // pending: no block, no receipt yet
  const [receipt, block] = await Promise.all([rpc('eth_getTransactionReceipt', [hash]), rpc('eth_getBlockByNumber', [tx.blockNumber, false])]);
  // The block may be gone (a reorg between the calls): keep what the transaction says of it.
  const header = isObj(block) ? block : { number: tx.blockNumber, hash: tx.blockHash ?? null };
  return { block: { ...header, transactions: [tx] }, receipts: isObj(receipt) ? [receipt] : [] };
}

export async function fetchFromOrigin(
  network: NetworkInfo,
  txHash: string,
  call: RpcCall,
  timeoutMs: number,
  clock: Pick<Clock, 'now'> = systemClock,
  options: OriginOptions = {},
): Promise<OriginLookup> {
  const rpc = withDeadline(call, timeoutMs, clock);
  const ctx = contextOf(network);
  switch (network.family) {
    case 'evm': {
      const item = await ethStyleItem(rpc, txHash);
      return item === null ? NOT_FOUND : { found: true, tx: pick(parseEvmPayload([item], ctx), txHash) };
    }
    case 'tvm': {
      const item = await ethStyleItem(rpc, '0x' + txHash);
      return item === null ? NOT_FOUND : { found: true, tx: pick(parseTronPayload([item], ctx), txHash) };
    }
    case 'svm': {
      const encoding = options.solanaEncoding ?? 'jsonParsed';
      const result = await rpc('getTransaction', [txHash, { encoding, maxSupportedTransactionVersion: 0 }]);
      if (result === null || result === undefined) return NOT_FOUND;
      return { found: true, tx: pick(parseSolanaPayload([result], ctx), txHash) };
    }
    case 'utxo': {
      let raw: unknown;
      try {
        raw = await rpc('getrawtransaction', [txHash, true]);
      } catch (err) {
        if (err instanceof OriginError && err.rpcError?.code === BITCOIN_NO_SUCH_TX) return NOT_FOUND;
        throw err;
      }
      if (raw === null || raw === undefined) return NOT_FOUND;
      if (!isObj(raw)) throw new OriginError('origin answered getrawtransaction with something that is not a transaction', 'invalid');
      let tx = raw;
      if (typeof raw.blockhash === 'string' && raw.height === undefined) {
        // The verbose transaction names its block but not the height; the header has it.
        // Best effort: a node that cannot say (pruned, no such method) leaves the height null.
        const header = await rpc('getblockheader', [raw.blockhash, true]).catch((err: unknown) => {
          if (err instanceof OriginError && err.kind === 'rpc') return null;
          throw err;
        });
        if (isObj(header) && typeof header.height === 'number') tx = { ...raw, height: header.height };
      }
      return { found: true, tx: pick(parseBitcoinPayload([tx], ctx), txHash) };
    }
    default:
      throw new OriginError(`no origin fetch for chain family ${String(network.family)}`, 'invalid');
  }
}
