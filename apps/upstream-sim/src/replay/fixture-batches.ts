import { networkByName, type ChainFamily } from '@chainpipe/chains';
import { networkOfFixture } from '../chain-nodes/catalog';
import { baseName, isObject, numberInFileName, quantityToInt, unwrapRpcResult, type JsonObject } from '../chain-nodes/json';
import { solanaBlockSlot } from '../chain-nodes/solana-node';
import type { StreamBatch } from './stream-batch';

/** One entry of the default replay set: an EVM block with its receipts, or one block file. */
export type DefaultReplay =
  | { network: string; dataset: 'block_with_receipts'; block: string; receipts: string }
  | { network: string; dataset: 'block'; file: string };

/**
 * What `--all` replays: per chain family blocks in the dataset forms the parsers take, oldest
 * first per network (streams move forward). Base mainnet gets the Base Goerli block (the only
 * Base fixture); Solana devnet its complete getBlock; Tron a complete node block; Bitcoin a
 * complete Core getblock (verbosity 2).
 */
export const DEFAULT_REPLAY_SET: readonly DefaultReplay[] = [
  { network: 'ethereum-mainnet', dataset: 'block_with_receipts', block: 'evm/eth-mainnet-13998626.block_fulltx.json', receipts: 'evm/eth-mainnet-13998626.receipts.json' },
  { network: 'ethereum-mainnet', dataset: 'block_with_receipts', block: 'evm/eth-mainnet-17053184.block_fulltx.json', receipts: 'evm/eth-mainnet-17053184.receipts.json' },
  { network: 'base-mainnet', dataset: 'block_with_receipts', block: 'evm/base-goerli-1041847.block_fulltx.json', receipts: 'evm/base-goerli-1041847.receipts.json' },
  { network: 'solana-devnet', dataset: 'block', file: 'solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json' },
  { network: 'tron-mainnet', dataset: 'block', file: 'tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json' },
  { network: 'bitcoin-mainnet', dataset: 'block', file: 'bitcoin/btc-mainnet-766390.getblock_verbosity2.json' },
];

/** The block number (slot, height) an element stands for, per chain family; null when it has none. */
export function rangeOf(family: ChainFamily, fileName: string, value: unknown): number | null {
  if (!isObject(value)) {
    const first = Array.isArray(value) ? value.find(isObject) : undefined;
    // Receipt and trace lists: their block number, if they name one.
    return first ? quantityToInt(first.blockNumber) : null;
  }
  switch (family) {
    case 'evm':
      return quantityToInt(value.number ?? value.blockNumber);
    case 'svm':
      if (typeof value.slot === 'number') return value.slot;
      return Array.isArray(value.transactions) ? solanaBlockSlot(fileName, value) : null;
    case 'tvm': {
      const header = isObject(value.block_header) ? value.block_header : undefined;
      const raw = header && isObject(header.raw_data) ? header.raw_data : undefined;
      if (typeof raw?.number === 'number') return raw.number;
      return quantityToInt(value.number ?? value.blockNumber);
    }
    case 'utxo':
      return typeof value.height === 'number' ? value.height : null;
  }
}

/** A dataset name for an element posted on its own: QuickNode's names for what it looks like. */
export function guessDataset(value: unknown): string {
  if (isObject(value)) {
    if (Array.isArray(value.transactions) || Array.isArray(value.tx) || Array.isArray(value.txs) || 'blockID' in value) return 'block';
    if ('transactionHash' in value) return 'receipts';
    return 'transactions';
  }
  const first = Array.isArray(value) ? value.find(isObject) : undefined;
  if (first && 'transactionHash' in first && !('action' in first)) return 'receipts';
  if (first && 'action' in first) return 'trace_blocks';
  if (first && ('result' in first || 'calls' in first || typeof first.type === 'string')) return 'debug_traces';
  return 'block';
}

function familyOf(network: string): ChainFamily {
  const info = networkByName(network);
  if (!info) throw new Error(`unknown network ${JSON.stringify(network)}`);
  return info.family;
}

/** Builds a default-set batch; `read` gives a fixture's parsed JSON by its path under the fixtures folder. */
export function batchFromDefault(entry: DefaultReplay, read: (relativePath: string) => unknown): StreamBatch {
  const family = familyOf(entry.network);
  if (entry.dataset === 'block_with_receipts') {
    const block = unwrapRpcResult(read(entry.block));
    const receipts = unwrapRpcResult(read(entry.receipts));
    const n = rangeOf(family, baseName(entry.block), block);
    if (n === null || !Array.isArray(receipts)) throw new Error(`${entry.block} + ${entry.receipts} do not make a block with receipts`);
    return { network: entry.network, dataset: entry.dataset, items: [{ block, receipts }], startRange: n, endRange: n, label: baseName(entry.block).replace(/\..*$/, '') };
  }
  const value = unwrapRpcResult(read(entry.file));
  const n = rangeOf(family, baseName(entry.file), value);
  if (n === null) throw new Error(`${entry.file} has no block number`);
  return { network: entry.network, dataset: entry.dataset, items: [value], startRange: n, endRange: n, label: baseName(entry.file).replace(/\..*$/, '') };
}

/**
 * A batch from any one file: a fixture (its JSON-RPC envelope removed) posted as a single data
 * element, or a file that already is a streamer delivery `{data, metadata}`. The network comes
 * from `network`, else the delivery's metadata, else the fixture catalog.
 */
export function batchFromFile(path: string, json: unknown, opts: { network?: string; dataset?: string } = {}): StreamBatch {
  const name = baseName(path.replace(/\\/g, '/'));
  if (isObject(json) && Array.isArray(json.data) && isObject(json.metadata)) {
    const meta: JsonObject = json.metadata;
    const network = opts.network ?? (typeof meta.network === 'string' ? meta.network : undefined);
    if (!network) throw new Error(`${path}: the delivery's metadata names no network; pass --network`);
    const family = familyOf(network);
    const start = typeof meta.batch_start_range === 'number' ? meta.batch_start_range : (rangeOf(family, name, json.data[0]) ?? 0);
    const end = typeof meta.batch_end_range === 'number' ? meta.batch_end_range : start + Math.max(0, json.data.length - 1);
    const dataset = opts.dataset ?? (typeof meta.dataset === 'string' ? meta.dataset : guessDataset(json.data[0]));
    return { network, dataset, items: json.data, startRange: start, endRange: end, label: name };
  }
  const network = opts.network ?? networkOfFixture(path);
  if (!network) throw new Error(`${path}: cannot tell which network this file is; pass --network`);
  const value = unwrapRpcResult(json);
  const n = rangeOf(familyOf(network), name, value) ?? numberInFileName(name) ?? 0;
  return { network, dataset: opts.dataset ?? guessDataset(value), items: [value], startRange: n, endRange: n, label: name.replace(/\.json$/, '') };
}
