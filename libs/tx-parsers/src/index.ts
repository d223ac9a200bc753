import type { NetworkInfo } from '@chainpipe/chains';
import { parseBitcoinPayload } from './bitcoin';
import { parseEvmPayload } from './evm';
import { decodePayload, type StreamMetadata } from './payload';
import { parseSolanaPayload } from './solana';
import { parseTronPayload } from './tron';
import type { ChainContext, ParseResult } from './types';

export * from './types';
export * from './payload';
export * from './addresses';
export { mergeInto, mergeRecords, recordChanged } from './record-merge';
export { emptyTx } from './record-base';
export { outputKey, resolveInputs, unresolvedPrevTxids, type KnownOutput, type KnownOutputs } from './bitcoin/resolve';
export { parseEvmPayload, parseSolanaPayload, parseTronPayload, parseBitcoinPayload };

const PARSERS = {
  evm: parseEvmPayload,
  svm: parseSolanaPayload,
  tvm: parseTronPayload,
  utxo: parseBitcoinPayload,
} as const;

export type ChainPayloadResult = ({ ok: true; metadata: StreamMetadata } & ParseResult) | { ok: false; reason: string };

/**
 * Parses one raw delivery of a network: unwraps the streamer envelope, reads batch metadata
 * from the body and the carried headers, and hands the blocks to the family's parser.
 * `ok: false` only when nothing at all can be read (not JSON, not blocks): that payload belongs
 * in the dead-letter topic. Never throws.
 */
export function parseChainPayload(body: Buffer | string, network: NetworkInfo, headers: Record<string, string> = {}): ChainPayloadResult {
  const decoded = decodePayload(body, headers);
  if (!decoded.ok) return decoded;
  const ctx: ChainContext = {
    chainType: network.chainType,
    chainId: network.chainId,
    family: network.family,
    nativeSymbol: network.nativeSymbol,
    nativeDecimals: network.nativeDecimals,
    dataset: decoded.metadata.dataset,
    batchStartRange: decoded.metadata.batchStartRange,
  };
  try {
    const result = PARSERS[network.family](decoded.items, ctx);
    return { ok: true, metadata: decoded.metadata, ...result };
  } catch (err) {
    // Parsers promise never to throw; this is the net under that promise.
    return { ok: false, reason: `parser failed: ${(err as Error).message}` };
  }
}
export { fetchFromOrigin, type OriginLookup, type OriginOptions, type RpcCall, type SolanaOriginEncoding } from './origin';
