/**
 * Real chain fixtures (test/fixtures/chain, provenance in its SOURCES.md) as the streamer
 * delivers them, and the rewrites the integration tests and the bench use to store the same
 * block several times without colliding with other users of the shared test database:
 * - `testNetwork` gives a block its own network name and chain id (store-level tests);
 * - `rebaseBlock` gives it a run-specific height and run-specific block/transaction hashes
 *   (end-to-end tests, which must use real network names): the last 6 characters of every hash
 *   are replaced by a suffix of [1-9a-f], valid in hex and in Base58 alike.
 * Test support only: no expectation is computed here.
 */
import { createHash, randomInt } from 'node:crypto';
import { networkByName, type NetworkInfo } from '@chainpipe/chains';
import { readFixtureJson } from './fixtures';
import { parseChainPayload, type ParsedBlock } from '@chainpipe/tx-parsers';

type Json = any;

export type FixtureFamily = 'evm' | 'svm' | 'tvm' | 'utxo';

const rpcResult = (path: string): Json => {
  const j = readFixtureJson(path);
  return j && typeof j === 'object' && !Array.isArray(j) && 'result' in j ? j.result : j;
};

/**
 * eth-mainnet 17053184 as a `block_with_receipts` element with callTracer traces: 125 txs. The
 * block also carries 16 beacon withdrawals, each parsed into a record of its own; they are left
 * out unless asked for (`withdrawals: true`), so tests about transaction storage count the
 * block's 125 transactions only.
 */
export function evmBlockItem(options: { withdrawals?: boolean } = {}): Json {
  const block = rpcResult('evm/eth-mainnet-17053184.block_fulltx.json');
  if (!options.withdrawals) delete block.withdrawals;
  return {
    block,
    receipts: rpcResult('evm/eth-mainnet-17053184.receipts.json'),
    traces: rpcResult('evm/eth-mainnet-17053184.debug_trace_callTracer.json'),
  };
}

/**
 * One eth-mainnet block as each streamer dataset delivers it: `block` (eth_getBlockByNumber with
 * full transactions), `receipts` (eth_getBlockReceipts), `traces` (debug_traceBlock with
 * callTracer) and `all` (`{block, receipts, traces}`). The fixtures hold bare callTracer frames in
 * transaction order (SOURCES.md: the `{txHash, result}` wrapper was not kept upstream); the traces
 * delivery wraps each frame with the hash of the transaction at its position, as recent geth
 * sends it, since a trace delivery without a block can only be matched by that hash.
 */
export function evmDatasetItems(height: 13998626 | 17053184): { block: Json; receipts: Json; traces: Json; all: Json } {
  const block = rpcResult(`evm/eth-mainnet-${height}.block_fulltx.json`);
  // Beacon withdrawals (17053184 has 16) are records of the block delivery alone; like
  // evmBlockItem, these items leave them out so the datasets describe the same transactions.
  delete block.withdrawals;
  const receipts = rpcResult(`evm/eth-mainnet-${height}.receipts.json`);
  const frames: Json[] = rpcResult(`evm/eth-mainnet-${height}.debug_trace_callTracer.json`);
  const traces = frames.map((result, i) => ({ txHash: block.transactions[i].hash, result }));
  return { block, receipts, traces, all: { block, receipts, traces } };
}

/** Solana devnet getBlock (jsonParsed, full): 25 txs, 2 of them votes. Its slot comes from the batch metadata. */
export function solanaBlockItem(): Json {
  return rpcResult('solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json');
}

/** Tron mainnet 60836289, /wallet/getblockbynum visible=true: 170 txs. */
export function tronBlockItem(): Json {
  return readFixtureJson('tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json');
}

/** Bitcoin Core getblock verbosity 2: 766390 (16 txs), 766391 (1034 txs), 766393 (8 txs). */
export function bitcoinBlockItem(height: 766390 | 766391 | 766393 = 766390): Json {
  return readFixtureJson(`bitcoin/btc-mainnet-${height}.getblock_verbosity2.json`);
}

export const FIXTURE_NETWORKS: Record<FixtureFamily, string> = {
  evm: 'ethereum-mainnet',
  svm: 'solana-devnet',
  tvm: 'tron-mainnet',
  utxo: 'bitcoin-mainnet',
};

/** The Solana fixture's slot: its parentSlot + 1 (its own slot is not in the getBlock result). */
export function fixtureHeight(family: FixtureFamily, item: Json): number {
  switch (family) {
    case 'evm':
      return Number(BigInt(item.block.number));
    case 'svm':
      return item.parentSlot + 1;
    case 'tvm':
      return item.block_header.raw_data.number;
    case 'utxo':
      return item.height;
  }
}

export interface StreamerMeta {
  network: string;
  dataset: string;
  start: number;
  end?: number;
  reorged?: number[];
}

/** The streamer's envelope: `{data: [...], metadata: {batch_start_range, …}}`. */
export function streamerBody(items: Json[], meta: StreamerMeta): string {
  const metadata: Json = {
    batch_start_range: meta.start,
    batch_end_range: meta.end ?? meta.start + items.length - 1,
    dataset: meta.dataset,
    network: meta.network,
  };
  if (meta.reorged) metadata.blocks_reorged = meta.reorged;
  return JSON.stringify({ data: items, metadata });
}

/** A 6-character suffix of [1-9a-f]: a valid tail for hex and Base58 hashes. */
export function randomSuffix(): string {
  const alphabet = '123456789abcdef';
  return Array.from({ length: 6 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

export function withSuffix(hash: string, suffix: string): string {
  return hash.slice(0, -suffix.length) + suffix;
}

/** Replaces every string value found in `map` (exact match), anywhere in the JSON. */
export function replaceStrings(value: Json, map: ReadonlyMap<string, string>): Json {
  if (typeof value === 'string') return map.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => replaceStrings(v, map));
  if (value && typeof value === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = replaceStrings(v, map);
    return out;
  }
  return value;
}

/** The block hash and transaction hashes of a fixture element, as the chain names them. */
export function fixtureHashes(family: FixtureFamily, item: Json): { block: string; txs: string[] } {
  switch (family) {
    case 'evm':
      return { block: item.block.hash, txs: item.block.transactions.map((t: Json) => t.hash) };
    case 'svm':
      return { block: item.blockhash, txs: item.transactions.flatMap((t: Json) => t.transaction.signatures) };
    case 'tvm':
      return { block: item.blockID, txs: item.transactions.map((t: Json) => t.txID) };
    case 'utxo':
      return { block: item.hash, txs: item.tx.flatMap((t: Json) => [t.txid, t.hash]) };
  }
}

export interface Rebased {
  item: Json;
  height: number;
  blockHash: string;
  /** Fixture hash → rebased hash, for every transaction hash (and the block hash). */
  hashes: Map<string, string>;
}

/**
 * The same block under a new height and with every block/transaction hash ending in `suffix`
 * (references inside the block, such as receipts' and logs' hashes or a spend of an earlier
 * transaction of the block, follow).
 */
export function rebaseBlock(family: FixtureFamily, item: Json, height: number, suffix: string): Rebased {
  const { block, txs } = fixtureHashes(family, item);
  const hashes = new Map<string, string>();
  for (const h of [block, ...txs]) hashes.set(h, withSuffix(h, suffix));
  const out = replaceStrings(item, hashes);
  switch (family) {
    case 'evm': {
      const oldHex: string = item.block.number;
      const newHex = '0x' + height.toString(16);
      const walk = (v: Json): void => {
        if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === 'object') {
          for (const k of Object.keys(v)) {
            if ((k === 'number' || k === 'blockNumber') && v[k] === oldHex) v[k] = newHex;
            else walk(v[k]);
          }
        }
      };
      walk(out);
      break;
    }
    case 'svm':
      out.parentSlot = height - 1;
      break;
    case 'tvm':
      out.block_header.raw_data.number = height;
      break;
    case 'utxo':
      out.height = height;
      break;
  }
  return { item: out, height, blockHash: hashes.get(block)!, hashes };
}

const DATASET: Record<FixtureFamily, string> = { evm: 'block_with_receipts', svm: 'block', tvm: 'block', utxo: 'block' };

/** Parses one fixture element with the real parser, as chain-parser does; throws on parse issues. */
export function parseFixture(family: FixtureFamily, item: Json, network: NetworkInfo, height: number = fixtureHeight(family, item)): ParsedBlock {
  const body = streamerBody([item], { network: network.network, dataset: DATASET[family], start: height });
  const res = parseChainPayload(Buffer.from(body), network, {});
  if (!res.ok) throw new Error(`fixture did not parse: ${res.reason}`);
  if (res.issues.length) throw new Error(`fixture parse issues: ${JSON.stringify(res.issues.slice(0, 3))}`);
  if (res.blocks.length !== 1) throw new Error(`fixture gave ${res.blocks.length} blocks`);
  return res.blocks[0];
}

export function datasetOf(family: FixtureFamily): string {
  return DATASET[family];
}

let networkCounter = 0;
/**
 * A network of its own for one test: the real chain's parser family and coin, a unique name and
 * a unique chain id, so its blocks, heights and transaction keys collide with nobody's.
 */
export function testNetwork(family: FixtureFamily, label: string): NetworkInfo {
  const base = networkByName(FIXTURE_NETWORKS[family])!;
  networkCounter += 1;
  const id = `${Date.now().toString(36)}${randomInt(36 ** 3).toString(36)}`;
  return { ...base, network: `${label}-${id}-${networkCounter}`.slice(0, 64), chainId: 1_000_000_000 + randomInt(1_000_000_000) };
}

/**
 * A Bitcoin Core verbosity-2 block as `getblock <hash> 0` returns it: the 80-byte header from its
 * fields (version, previousblockhash, merkleroot, time, bits, nonce), the transaction count and
 * every transaction's own `hex`. Written out by hand, without the library the parser uses, and
 * checked: the header must hash to the block's `hash`, else this throws.
 */
export function bitcoinRawBlock(block: Json): string {
  const le32 = (v: number): string => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    return b.toString('hex');
  };
  const reversed = (hex: string): string => Buffer.from(hex, 'hex').reverse().toString('hex');
  const n: number = block.tx.length;
  const count = n < 0xfd ? n.toString(16).padStart(2, '0') : 'fd' + Buffer.from([n & 0xff, n >> 8]).toString('hex');
  const header = le32(block.version) + reversed(block.previousblockhash) + reversed(block.merkleroot) + le32(block.time) + reversed(block.bits) + le32(block.nonce);
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();
  const id = reversed(sha256(sha256(Buffer.from(header, 'hex'))).toString('hex'));
  if (id !== block.hash) throw new Error(`derived header hashes to ${id}, not to the block hash ${block.hash}`);
  return header + count + block.tx.map((t: Json) => t.hex).join('');
}
