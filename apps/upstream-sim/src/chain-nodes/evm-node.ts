import { RpcError, invalidParams, type RpcHandler, type RpcNode, type RpcParams } from '../json-rpc';
import type { FixtureDoc } from './catalog';
import { intrinsicGas, type EvmLedger } from './evm-ledger';
import {
  parseAddress,
  parseBlockNumber,
  parseBlockSelector,
  parseBool,
  parseHash,
  positional,
  requiredArg,
  type BlockSelector,
} from './evm-params';
import { baseName, isObject, kindInFileName, numberInFileName, quantityToInt, toQuantity, unwrapRpcResult, type JsonObject } from './json';

export type EvmDocKind = 'block' | 'blockReceipts' | 'receipt' | 'tx' | 'callTraces' | 'parityTraces';

/** A fixture reduced to what it holds for the EVM index. */
export interface EvmDoc {
  kind: EvmDocKind;
  value: unknown;
  /** Block number from the file name (traces carry none of their own). */
  fileNumber: number | null;
  source: string;
}

export interface Skipped {
  source: string;
  reason: string;
  /** True for files that are known not to be node data (logged quietly). */
  expected?: boolean;
}

/** Everything known about one EVM network, indexed once at boot. Hashes are lowercase. */
export interface EvmChain {
  blocks: Map<number, JsonObject>;
  /** Block hash → number, from blocks and from the blockHash of receipts and transactions. */
  blockNumbers: Map<string, number>;
  txs: Map<string, JsonObject>;
  receipts: Map<string, JsonObject>;
  /** Complete receipt lists (eth_getBlockReceipts) per block. */
  blockReceipts: Map<number, JsonObject[]>;
  /** debug_traceBlock* callTracer results per block: `[{txHash, result}]` or old geth's `[{result}]`. */
  callTraces: Map<number, unknown[]>;
  /** Parity/OpenEthereum trace_block results per block. */
  parityTraces: Map<number, unknown[]>;
  /** The highest block of a block fixture; without one, the highest block any fixture names. */
  head: number | null;
}

const KIND_RULES: [RegExp, EvmDocKind][] = [
  [/^(block_fulltx|eth_getBlockBy(Number|Hash)_full)$/, 'block'],
  [/^(receipts|eth_getBlockReceipts)$/, 'blockReceipts'],
  [/^(debug_trace_callTracer|debug_traceBlockByNumber_callTracer)$/, 'callTraces'],
  [/^trace_block$/, 'parityTraces'],
  [/^eth_getTransactionByHash(_|$)/, 'tx'],
  [/receipt/i, 'receipt'],
];

/** What an EVM fixture file holds, from the method part of its name. */
export function classifyEvmFixture(doc: FixtureDoc): EvmDoc | Skipped {
  const name = baseName(doc.path);
  const kindName = kindInFileName(name);
  const rule = KIND_RULES.find(([re]) => re.test(kindName));
  if (!rule) return { source: doc.path, reason: `no EVM method recognised in ${JSON.stringify(kindName)}` };
  return { kind: rule[1], value: unwrapRpcResult(doc.json), fileNumber: numberInFileName(name), source: doc.path };
}

function lower(v: unknown): string | null {
  return typeof v === 'string' ? v.toLowerCase() : null;
}

function isCallFrame(v: unknown): boolean {
  return isObject(v) && typeof v.type === 'string' && /^[A-Z][A-Z0-9]*$/.test(v.type) && !('result' in v);
}

export function emptyEvmChain(): EvmChain {
  return { blocks: new Map(), blockNumbers: new Map(), txs: new Map(), receipts: new Map(), blockReceipts: new Map(), callTraces: new Map(), parityTraces: new Map(), head: null };
}

/** Indexes EVM fixture documents into Maps by number and hash. Pure; unusable documents are reported, not thrown. */
export function buildEvmChain(docs: readonly EvmDoc[]): { chain: EvmChain; skipped: Skipped[] } {
  const chain = emptyEvmChain();
  const skipped: Skipped[] = [];
  const mentioned: number[] = [];
  const pendingCallTraces: { number: number; items: unknown[] }[] = [];
  const noteBlock = (hash: unknown, number: unknown) => {
    const h = lower(hash);
    const n = quantityToInt(number);
    if (n !== null) mentioned.push(n);
    if (h && n !== null && !chain.blockNumbers.has(h)) chain.blockNumbers.set(h, n);
  };
  const addReceipt = (r: JsonObject) => {
    const h = lower(r.transactionHash);
    if (!h) return false;
    chain.receipts.set(h, r);
    noteBlock(r.blockHash, r.blockNumber);
    return true;
  };

  // Blocks first, so that standalone transactions only fill what the blocks lack.
  const order: EvmDocKind[] = ['block', 'blockReceipts', 'receipt', 'tx', 'callTraces', 'parityTraces'];
  const sorted = [...docs].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  for (const doc of sorted) {
    const v = doc.value;
    const skip = (reason: string) => skipped.push({ source: doc.source, reason });
    switch (doc.kind) {
      case 'block': {
        const n = isObject(v) ? quantityToInt(v.number) : null;
        const hash = isObject(v) ? lower(v.hash) : null;
        if (!isObject(v) || n === null || !hash) {
          skip('not a block with number and hash');
          break;
        }
        chain.blocks.set(n, v);
        chain.blockNumbers.set(hash, n);
        mentioned.push(n);
        for (const tx of Array.isArray(v.transactions) ? v.transactions : []) {
          const h = isObject(tx) ? lower(tx.hash) : null;
          if (h) chain.txs.set(h, tx as JsonObject);
        }
        break;
      }
      case 'blockReceipts': {
        const list = Array.isArray(v) ? v.filter(isObject) : [];
        const n = quantityToInt(list[0]?.blockNumber) ?? doc.fileNumber;
        if (list.length === 0 || n === null) {
          skip('not a list of receipts');
          break;
        }
        chain.blockReceipts.set(n, list);
        list.forEach(addReceipt);
        break;
      }
      case 'receipt':
        if (!isObject(v) || !addReceipt(v)) skip('not a receipt with transactionHash');
        break;
      case 'tx': {
        const h = isObject(v) ? lower(v.hash) : null;
        if (!isObject(v) || !h) {
          skip('not a transaction with hash');
          break;
        }
        if (!chain.txs.has(h)) chain.txs.set(h, v);
        noteBlock(v.blockHash, v.blockNumber);
        break;
      }
      case 'callTraces':
        if (!Array.isArray(v) || doc.fileNumber === null) skip('not a list of call traces');
        else pendingCallTraces.push({ number: doc.fileNumber, items: v });
        break;
      case 'parityTraces': {
        const first = Array.isArray(v) ? v.find(isObject) : undefined;
        const n = quantityToInt(first?.blockNumber) ?? doc.fileNumber;
        if (!Array.isArray(v) || n === null) {
          skip('not a list of parity traces');
          break;
        }
        chain.parityTraces.set(n, v);
        mentioned.push(n);
        break;
      }
    }
  }
  for (const { number, items } of pendingCallTraces) {
    // chainstorage kept bare callTracer frames in block order; a node answers `{txHash, result}`.
    const block = chain.blocks.get(number);
    const txs = block && Array.isArray(block.transactions) ? block.transactions : [];
    const wrapped = items.map((item, i) => {
      if (!isCallFrame(item)) return item;
      const tx = txs[i];
      const txHash = isObject(tx) ? tx.hash : typeof tx === 'string' ? tx : undefined;
      return txHash !== undefined && txs.length === items.length ? { txHash, result: item } : { result: item };
    });
    chain.callTraces.set(number, wrapped);
    mentioned.push(number);
  }
  chain.head = chain.blocks.size > 0 ? Math.max(...chain.blocks.keys()) : mentioned.length > 0 ? Math.max(...mentioned) : null;
  return { chain, skipped };
}

export interface EvmNodeOptions {
  network: string;
  chainId: number;
  /** Tron's eth view has no debug_/trace_ namespace. */
  traces: boolean;
  clientVersion: string;
  /** Balances, nonces and new blocks: the node then takes signed transactions. */
  ledger?: EvmLedger;
}

/** A block as eth_getBlockBy* returns it: full transaction objects, or only their hashes. */
function shapeBlock(chain: EvmChain, block: JsonObject, fullTx: boolean): JsonObject {
  const txs = Array.isArray(block.transactions) ? block.transactions : [];
  if (!fullTx) {
    if (txs.every((t) => typeof t === 'string')) return block;
    return { ...block, transactions: txs.map((t) => (isObject(t) ? t.hash : t)) };
  }
  if (txs.every(isObject)) return block;
  // A hash-only fixture: full objects only when every one of them is known, never a mix.
  const objects = txs.map((t) => (typeof t === 'string' ? chain.txs.get(t.toLowerCase()) : isObject(t) ? t : undefined));
  return objects.every((o) => o !== undefined) ? { ...block, transactions: objects } : block;
}

/** The JSON-RPC methods of an EVM node answering from `chain`. */
export function evmNode(chain: EvmChain, opts: EvmNodeOptions): RpcNode {
  const head = () => chain.head ?? 0;
  const numberOf = (sel: BlockSelector): number | undefined => ('number' in sel ? sel.number : chain.blockNumbers.get(sel.hash));
  const tracerOf = (config: unknown, index: number) => {
    const tracer = isObject(config) ? config.tracer : undefined;
    if (tracer !== 'callTracer') throw invalidParams(`invalid argument ${index}: only the callTracer is simulated (got ${JSON.stringify(tracer ?? null)})`);
  };
  const callTracesOf = (n: number | undefined, what: string): unknown[] => {
    const traces = n === undefined ? undefined : chain.callTraces.get(n);
    if (traces) return traces;
    if (n !== undefined && chain.blocks.has(n)) throw new RpcError(-32000, `call traces of block ${n} are not in the simulator fixtures`);
    throw new RpcError(-32000, `${what} not found`);
  };

  const methods = new Map<string, RpcHandler>([
    ['web3_clientVersion', () => opts.clientVersion],
    ['net_version', () => String(opts.chainId)],
    ['eth_chainId', () => toQuantity(opts.chainId)],
    ['eth_syncing', () => false],
    ['eth_blockNumber', () => toQuantity(head())],
    [
      'eth_getBlockByNumber',
      (params: RpcParams) => {
        const args = positional(params);
        const n = parseBlockNumber(requiredArg(args, 0), 0, head());
        const full = parseBool(requiredArg(args, 1), 1);
        const block = chain.blocks.get(n);
        return block ? shapeBlock(chain, block, full) : null;
      },
    ],
    [
      'eth_getBlockByHash',
      (params: RpcParams) => {
        const args = positional(params);
        const hash = parseHash(requiredArg(args, 0), 0);
        const full = parseBool(requiredArg(args, 1), 1);
        const n = chain.blockNumbers.get(hash);
        const block = n === undefined ? undefined : chain.blocks.get(n);
        return block ? shapeBlock(chain, block, full) : null;
      },
    ],
    ['eth_getTransactionByHash', (params: RpcParams) => chain.txs.get(parseHash(requiredArg(positional(params), 0), 0)) ?? null],
    ['eth_getTransactionReceipt', (params: RpcParams) => chain.receipts.get(parseHash(requiredArg(positional(params), 0), 0)) ?? null],
    [
      'eth_getBlockReceipts',
      (params: RpcParams) => {
        const n = numberOf(parseBlockSelector(requiredArg(positional(params), 0), 0, head()));
        if (n === undefined) return null;
        const receipts = chain.blockReceipts.get(n);
        if (receipts) return receipts;
        // Known block without its receipt list: an explicit gap, never a partial list.
        if (chain.blocks.has(n)) throw new RpcError(-32000, `receipts of block ${n} are not in the simulator fixtures`);
        return null;
      },
    ],
    [
      'eth_getBalance',
      (params: RpcParams) => {
        const args = positional(params);
        const address = parseAddress(requiredArg(args, 0), 0);
        const sel = parseBlockSelector(requiredArg(args, 1), 1, head());
        if ('number' in sel && sel.number > head()) throw new RpcError(-32000, 'header not found');
        if ('hash' in sel && !chain.blockNumbers.has(sel.hash)) throw new RpcError(-32000, `header for hash not found`);
        // a node without a ledger (Tron's eth view) knows of no balance: every address holds nothing
        return toQuantity(opts.ledger?.balanceOf(address) ?? 0n);
      },
    ],
  ]);
  const ledger = opts.ledger;
  if (ledger) {
    methods.set('eth_sendRawTransaction', (params: RpcParams) => {
      const raw = requiredArg(positional(params), 0);
      if (typeof raw !== 'string') throw invalidParams('invalid argument 0: json: cannot unmarshal non-string into Go value of type hexutil.Bytes');
      return ledger.submitRaw(raw);
    });
    methods.set('eth_getTransactionCount', (params: RpcParams) => {
      const args = positional(params);
      const address = parseAddress(requiredArg(args, 0), 0);
      const tag = args[1] ?? 'latest';
      return toQuantity(ledger.nonceOf(address, tag === 'pending'));
    });
    methods.set('eth_call', (params: RpcParams) => {
      const call = requiredArg(positional(params), 0);
      const to = isObject(call) ? call.to : undefined;
      const data = isObject(call) ? (call.data ?? call.input) : undefined;
      if (typeof to !== 'string' || typeof data !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(data)) throw invalidParams('invalid argument 0: a call needs to and data');
      return ledger.call(parseAddress(to, 0), data as `0x${string}`);
    });
    // development nodes' balance setter (Anvil, Hardhat), so a test can empty an address
    for (const name of ['anvil_setBalance', 'hardhat_setBalance']) {
      methods.set(name, (params: RpcParams) => {
        const args = positional(params);
        const address = parseAddress(requiredArg(args, 0), 0);
        const wei = requiredArg(args, 1);
        if (typeof wei !== 'string' || !/^0x[0-9a-fA-F]+$/.test(wei)) throw invalidParams('invalid argument 1: a quantity');
        ledger.setBalance(address, BigInt(wei));
        return null;
      });
    }
    methods.set('eth_gasPrice', () => toQuantity(ledger.gasPrice()));
    methods.set('eth_maxPriorityFeePerGas', () => toQuantity(ledger.priorityFee()));
    methods.set('eth_estimateGas', (params: RpcParams) => {
      const call = requiredArg(positional(params), 0);
      const raw = isObject(call) ? (call.data ?? call.input) : undefined;
      const data = typeof raw === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(raw) ? (raw as `0x${string}`) : undefined;
      // a call that would revert has no estimate, as on a real node
      if (isObject(call) && typeof call.to === 'string' && typeof call.from === 'string' && data && data.length > 2) {
        const value = typeof call.value === 'string' && /^0x[0-9a-fA-F]+$/.test(call.value) ? BigInt(call.value) : 0n;
        ledger.dryRun({ from: parseAddress(call.from, 0), to: parseAddress(call.to, 0), value, input: data });
      }
      return toQuantity(intrinsicGas(data));
    });
  }
  if (opts.traces) {
    methods.set('debug_traceBlockByNumber', (params: RpcParams) => {
      const args = positional(params);
      const n = parseBlockNumber(requiredArg(args, 0), 0, head());
      tracerOf(args[1], 1);
      return callTracesOf(n, `block #${n}`);
    });
    methods.set('debug_traceBlockByHash', (params: RpcParams) => {
      const args = positional(params);
      const hash = parseHash(requiredArg(args, 0), 0);
      tracerOf(args[1], 1);
      return callTracesOf(chain.blockNumbers.get(hash), `block ${hash}`);
    });
    methods.set('trace_block', (params: RpcParams) => {
      const n = numberOf(parseBlockSelector(requiredArg(positional(params), 0), 0, head()));
      const traces = n === undefined ? undefined : chain.parityTraces.get(n);
      if (traces) return traces;
      if (n !== undefined && chain.blocks.has(n)) throw new RpcError(-32000, `parity traces of block ${n} are not in the simulator fixtures`);
      return null;
    });
  }
  return {
    dialect: 'jsonrpc2',
    methods,
    methodNotFoundMessage: (method) => `the method ${method} does not exist/is not available`,
  };
}
