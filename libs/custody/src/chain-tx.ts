import { OriginError, type ChainOrigins, type NetworkInfo } from '@chainpipe/chains';
import { fetchFromOrigin, parseTronPayload, type OriginLookup } from '@chainpipe/tx-parsers';
import { jsonRpcCall, upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import { tronWalletBase } from './tron-transaction';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A Tron transaction from java-tron's HTTP API (the API the Tron sender speaks): its info
 * (`gettransactioninfobyid`: block, result, TRC-20 event logs) with its node block
 * (`getblockbynum`), parsed by the Tron parser as a streamed native block with its infos; a
 * transaction known but not yet in a block is parsed alone (pending).
 */
async function tronWalletTx(origin: string, network: NetworkInfo, txHash: string, timeoutMs: number): Promise<OriginLookup> {
  const deadline = Date.now() + timeoutMs;
  const wallet = async (method: string, body: Json): Promise<unknown> => {
    const left = deadline - Date.now();
    if (left <= 0) throw new OriginError(`origin did not answer within ${timeoutMs} ms`, 'timeout');
    return upstreamJson({ url: upstreamUrl(tronWalletBase(origin), `/wallet/${method}`), method: 'POST', json: body, timeoutMs: left });
  };
  const value = txHash.replace(/^0x/, '').toLowerCase();
  const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
  const info = await wallet('gettransactioninfobyid', { value });
  let payload: unknown;
  if (isObj(info) && typeof info.blockNumber === 'number') {
    const block = await wallet('getblockbynum', { num: info.blockNumber });
    if (!isObj(block)) throw new OriginError(`getblockbynum ${info.blockNumber} answered no block`, 'invalid');
    payload = { native_block: block, transaction_infos: [info] };
  } else {
    const tx = await wallet('gettransactionbyid', { value });
    if (!isObj(tx) || typeof tx.txID !== 'string') return { found: false };
    payload = tx;
  }
  const result = parseTronPayload([payload], ctx);
  for (const b of result.blocks) for (const tx of b.transactions) if (tx.tx_hash.replace(/^0x/, '').toLowerCase() === value) return { found: true, tx };
  throw new OriginError(`origin answer for ${txHash} could not be parsed`, 'invalid');
}

/**
 * A transaction as its network's node shows it, over the configured origins
 * (`chainOriginsFromConfig`), parsed by the same parsers as streamed blocks: `fetchFromOrigin`
 * (EVM chains, Bitcoin, Solana over JSON-RPC), and java-tron's HTTP API for Tron. What the money
 * flow reads a deposit from before anything moves (docs/decisions.md#d161); a network without an
 * origin rejects as unreachable.
 */
export function originTxLookup(origins: ChainOrigins, timeoutMs: number): (network: NetworkInfo, txHash: string) => Promise<OriginLookup> {
  return (network, txHash) => {
    const url = origins.urlFor(network.network);
    if (!url) return Promise.reject(new OriginError(`no chain origin configured for ${network.network}`, 'unreachable'));
    if (network.family === 'tvm') return tronWalletTx(url, network, txHash, timeoutMs);
    return fetchFromOrigin(network, txHash, (method, params, callTimeoutMs) => jsonRpcCall(url, method, params, callTimeoutMs), timeoutMs);
  };
}
