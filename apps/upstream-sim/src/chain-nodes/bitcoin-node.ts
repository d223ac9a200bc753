import { RpcError, type RpcHandler, type RpcNode, type RpcParams } from '../json-rpc';
import type { BitcoinLedger } from './bitcoin-ledger';
import { serializedBlock } from './bitcoin-raw';
import type { FixtureDoc } from './catalog';
import type { Skipped } from './evm-node';
import { baseName, isObject, kindInFileName, unwrapRpcResult, type JsonObject } from './json';

/** Bitcoin Core's error codes (src/rpc/protocol.h). */
const RPC_MISC_ERROR = -1;
const RPC_TYPE_ERROR = -3;
const RPC_INVALID_ADDRESS_OR_KEY = -5;
const RPC_INVALID_PARAMETER = -8;

export interface BitcoinDoc {
  kind: 'block' | 'tx';
  value: JsonObject;
  source: string;
}

interface TxEntry {
  tx: JsonObject;
  /** The block a transaction was cut out of; null for getrawtransaction fixtures. */
  block: JsonObject | null;
}

export interface BitcoinChain {
  blocks: Map<string, JsonObject>;
  hashes: Map<number, string>;
  txs: Map<string, TxEntry>;
  tip: JsonObject | null;
}

export function classifyBitcoinFixture(doc: FixtureDoc): BitcoinDoc | Skipped {
  const kind = kindInFileName(baseName(doc.path));
  const value = unwrapRpcResult(doc.json);
  if (!isObject(value)) return { source: doc.path, reason: 'not an object' };
  if (kind.startsWith('getblock_')) return { kind: 'block', value, source: doc.path };
  if (kind.startsWith('getrawtransaction_')) return { kind: 'tx', value, source: doc.path };
  return { source: doc.path, reason: `no Bitcoin Core method recognised in ${JSON.stringify(kind)}` };
}

export function emptyBitcoinChain(): BitcoinChain {
  return { blocks: new Map(), hashes: new Map(), txs: new Map(), tip: null };
}

/** Indexes getblock (verbosity 2) and getrawtransaction fixtures by hash, height and txid. Pure. */
export function buildBitcoinChain(docs: readonly BitcoinDoc[]): { chain: BitcoinChain; skipped: Skipped[] } {
  const chain = emptyBitcoinChain();
  const skipped: Skipped[] = [];
  for (const doc of docs.filter((d) => d.kind === 'block')) {
    const { value } = doc;
    if (typeof value.hash !== 'string' || typeof value.height !== 'number' || !Array.isArray(value.tx)) {
      skipped.push({ source: doc.source, reason: 'block without hash, height or tx list' });
      continue;
    }
    chain.blocks.set(value.hash, value);
    chain.hashes.set(value.height, value.hash);
    if (!chain.tip || value.height > (chain.tip.height as number)) chain.tip = value;
    for (const tx of value.tx) {
      if (isObject(tx) && typeof tx.txid === 'string') chain.txs.set(tx.txid, { tx, block: value });
    }
  }
  for (const doc of docs.filter((d) => d.kind === 'tx')) {
    if (typeof doc.value.txid !== 'string') {
      skipped.push({ source: doc.source, reason: 'transaction without txid' });
      continue;
    }
    if (!chain.txs.has(doc.value.txid)) chain.txs.set(doc.value.txid, { tx: doc.value, block: null });
  }
  return { chain, skipped };
}

/** Core's named parameters per method, for calls that send an object instead of a list. */
const PARAM_NAMES: Record<string, string[]> = {
  getblockhash: ['height'],
  getblock: ['blockhash', 'verbosity'],
  getrawtransaction: ['txid', 'verbose', 'blockhash'],
  getblockheader: ['blockhash', 'verbose'],
  sendrawtransaction: ['hexstring', 'maxfeerate', 'maxburnamount'],
  estimatesmartfee: ['conf_target', 'estimate_mode'],
  scantxoutset: ['action', 'scanobjects'],
};

function args(method: string, params: RpcParams): unknown[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params;
  const names = PARAM_NAMES[method] ?? [];
  const unknown = Object.keys(params).filter((k) => !names.includes(k));
  if (unknown.length > 0) throw new RpcError(RPC_INVALID_PARAMETER, `Unknown named parameter ${unknown[0]}`);
  return names.map((n) => params[n]);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'number' ? 'number' : typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : 'object';
}

function hexId(v: unknown, name: string): string {
  if (v === undefined) throw new RpcError(RPC_MISC_ERROR, `missing required parameter ${name}`);
  if (typeof v !== 'string') throw new RpcError(RPC_TYPE_ERROR, `JSON value of type ${typeName(v)} is not of expected type string`);
  if (v.length !== 64) throw new RpcError(RPC_INVALID_PARAMETER, `${name} must be of length 64 (not ${v.length}, for '${v.slice(0, 100)}')`);
  if (!/^[0-9a-fA-F]{64}$/.test(v)) throw new RpcError(RPC_INVALID_PARAMETER, `${name} must be hexadecimal string (not '${v}')`);
  return v.toLowerCase();
}

/** Core's verbosity / verbose argument: a number, or a boolean meaning 1 / 0. */
function level(v: unknown, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new RpcError(RPC_TYPE_ERROR, `JSON value of type ${typeName(v)} is not of expected type number`);
}

/** Core's verbose-1 transaction: no fee, no prevouts. */
function withoutFeeAndPrevouts(tx: JsonObject): JsonObject {
  const { fee: _fee, ...rest } = tx;
  if (!Array.isArray(rest.vin)) return rest;
  return { ...rest, vin: rest.vin.map((input) => (isObject(input) && 'prevout' in input ? (({ prevout: _p, ...i }) => i)(input) : input)) };
}

/**
 * Bitcoin Core's JSON-RPC over the chain. With a ledger (mainnet) it also takes transactions
 * (`sendrawtransaction`), scans the UTXO set (`scantxoutset`), estimates fees
 * (`estimatesmartfee`) and shows pooled transactions; blocks it produced count their
 * confirmations from the tip (fixture blocks keep the count they were recorded with).
 */
export function bitcoinNode(chain: BitcoinChain, ledger?: BitcoinLedger): RpcNode {
  const tipHeight = () => (typeof chain.tip?.height === 'number' ? chain.tip.height : 0);
  const confirmationsOf = (block: JsonObject) => (typeof block.confirmations === 'number' ? block.confirmations : tipHeight() - (block.height as number) + 1);
  const methods = new Map<string, RpcHandler>([
    ['getblockcount', () => tipHeight()],
    ['getbestblockhash', () => chain.tip?.hash ?? '0'.repeat(64)],
    [
      'getblockchaininfo',
      () => ({
        chain: 'main',
        blocks: tipHeight(),
        headers: tipHeight(),
        bestblockhash: chain.tip?.hash ?? '0'.repeat(64),
        difficulty: chain.tip?.difficulty ?? 0,
        time: chain.tip?.time ?? 0,
        mediantime: chain.tip?.mediantime ?? 0,
        verificationprogress: 1,
        initialblockdownload: false,
        chainwork: chain.tip?.chainwork ?? '0'.repeat(64),
        size_on_disk: 0,
        pruned: false,
        warnings: '',
      }),
    ],
    [
      'getblockhash',
      (params: RpcParams) => {
        const [height] = args('getblockhash', params);
        if (height === undefined) throw new RpcError(RPC_MISC_ERROR, 'missing required parameter height');
        if (typeof height !== 'number' || !Number.isInteger(height)) throw new RpcError(RPC_TYPE_ERROR, `JSON value of type ${typeName(height)} is not of expected type number`);
        if (height < 0 || height > tipHeight()) throw new RpcError(RPC_INVALID_PARAMETER, 'Block height out of range');
        const hash = chain.hashes.get(height);
        if (!hash) throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, `Block at height ${height} is not in the simulator fixtures`);
        return hash;
      },
    ],
    [
      'getblock',
      (params: RpcParams) => {
        const a = args('getblock', params);
        const hash = hexId(a[0], 'blockhash');
        const verbosity = level(a[1], 1);
        const block = chain.blocks.get(hash);
        if (!block) throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, 'Block not found');
        if (verbosity <= 0) {
          const raw = serializedBlock(block);
          if (raw === null) throw new RpcError(RPC_MISC_ERROR, 'serialized block not available: the fixture lacks the raw hex of a transaction');
          return raw;
        }
        const shown = { ...block, confirmations: confirmationsOf(block) };
        if (verbosity === 1) return { ...shown, tx: (block.tx as unknown[]).map((t) => (isObject(t) ? t.txid : t)) };
        // Verbosity 3 adds prevouts only where Core has undo data; the fixtures have none.
        return shown;
      },
    ],
    [
      'getrawtransaction',
      (params: RpcParams) => {
        const a = args('getrawtransaction', params);
        const txid = hexId(a[0], 'parameter 1');
        const verbosity = level(a[1], 0);
        const inBlock = a[2] === undefined || a[2] === null ? null : hexId(a[2], 'parameter 3');
        if (inBlock !== null && !chain.blocks.has(inBlock)) throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, 'Block hash not found');
        const pooled = inBlock === null ? ledger?.pooledTx(txid) : undefined;
        if (pooled) return verbosity <= 0 ? pooled.hex : pooled;
        const entry = chain.txs.get(txid);
        if (!entry) throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
        if (inBlock !== null && entry.block?.hash !== inBlock && entry.tx.blockhash !== inBlock) {
          throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, 'No such transaction found in the provided block. Use gettransaction for wallet transactions.');
        }
        if (verbosity <= 0) {
          if (typeof entry.tx.hex !== 'string') throw new RpcError(RPC_MISC_ERROR, 'raw hex of this transaction is not in the simulator fixtures');
          return entry.tx.hex;
        }
        // Cut out of a block: Core adds where it was mined.
        const tx = entry.block
          ? { ...entry.tx, blockhash: entry.block.hash, confirmations: confirmationsOf(entry.block), time: entry.block.time, blocktime: entry.block.time }
          : entry.tx;
        return verbosity === 1 ? withoutFeeAndPrevouts(tx) : tx;
      },
    ],
    [
      'getblockheader',
      (params: RpcParams) => {
        const a = args('getblockheader', params);
        const hash = hexId(a[0], 'hash');
        const block = chain.blocks.get(hash);
        if (!block) throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, 'Block not found');
        const { tx: _tx, size: _size, strippedsize: _stripped, weight: _weight, ...header } = block;
        if (level(a[1], 1) <= 0) throw new RpcError(RPC_MISC_ERROR, 'the simulator serves verbose block headers only');
        return { ...header, confirmations: confirmationsOf(block) };
      },
    ],
  ]);
  if (ledger) {
    methods.set('sendrawtransaction', (params: RpcParams) => ledger.submitRaw(args('sendrawtransaction', params)[0]));
    methods.set('estimatesmartfee', (params: RpcParams) => {
      const [target] = args('estimatesmartfee', params);
      if (typeof target !== 'number' || !Number.isInteger(target)) throw new RpcError(RPC_TYPE_ERROR, `JSON value of type ${typeName(target)} is not of expected type number`);
      if (target < 1 || target > 1008) throw new RpcError(RPC_INVALID_PARAMETER, `Invalid conf_target, must be between 1 and 1008`);
      return ledger.estimateSmartFee(target);
    });
    methods.set('scantxoutset', (params: RpcParams) => {
      const [action, objects] = args('scantxoutset', params);
      if (action === 'status') return null;
      if (action === 'abort') return false;
      if (action !== 'start') throw new RpcError(RPC_INVALID_PARAMETER, 'Invalid action argument');
      if (!Array.isArray(objects)) throw new RpcError(RPC_MISC_ERROR, 'scanobjects argument is required for the start action');
      const addresses = objects.map((o) => {
        const desc = typeof o === 'string' ? o : isObject(o) && typeof o.desc === 'string' ? o.desc : undefined;
        const m = desc ? /^addr\(([^)]+)\)(#[a-z0-9]{8})?$/.exec(desc) : null;
        if (!m) throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, `the simulator scans addr(…) descriptors only, not ${JSON.stringify(desc ?? o)}`);
        return m[1];
      });
      try {
        return ledger.scan(addresses);
      } catch {
        throw new RpcError(RPC_INVALID_ADDRESS_OR_KEY, "addr(): Address is not valid");
      }
    });
  }
  return { dialect: 'bitcoin-core', methods, methodNotFoundMessage: () => 'Method not found' };
}
