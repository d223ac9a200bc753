import type { FixtureDoc } from './catalog';
import { type EvmDoc, type Skipped } from './evm-node';
import { baseName, isObject, kindInFileName, numberInFileName, unwrapRpcResult, type JsonObject } from './json';
import { toTronAddressFormat, wantedFormat, type TronAddressFormat } from './tron-visible';

export interface Stored<T> {
  value: T;
  format: TronAddressFormat;
}

export type TronWalletDoc =
  | { kind: 'block'; value: JsonObject; format: TronAddressFormat; source: string }
  | { kind: 'tx'; value: JsonObject; format: TronAddressFormat; source: string }
  | { kind: 'info'; value: JsonObject; format: TronAddressFormat; source: string }
  | { kind: 'blockInfos'; value: JsonObject[]; number: number; format: TronAddressFormat; source: string };

/** The java-tron node HTTP API view (`/wallet/*`), indexed by block number, block id and tx id. */
export interface TronWallet {
  blocks: Map<number, Stored<JsonObject>>;
  blockIds: Map<string, number>;
  txs: Map<string, Stored<JsonObject>>;
  infos: Map<string, Stored<JsonObject>>;
  blockInfos: Map<number, Stored<JsonObject[]>>;
  head: number | null;
}

const ADDRESS_KEYS = /(^|_)address$/;

/** Finds the address format of a fixture from the first address-like field in it. */
export function tronAddressFormat(value: unknown): TronAddressFormat {
  let found: TronAddressFormat | null = null;
  const visit = (v: unknown, depth: number): void => {
    if (found || depth > 8) return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, depth + 1));
    if (!isObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (found) return;
      if (ADDRESS_KEYS.test(k) && typeof x === 'string') {
        if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(x)) found = 'base58';
        else if (/^41[0-9a-fA-F]{40}$/.test(x)) found = 'hex';
      } else visit(x, depth + 1);
    }
  };
  visit(value, 0);
  return found ?? 'hex';
}

/**
 * Tron fixtures are of two kinds: the node HTTP API (`wallet_*`) and the eth-compatible JSON-RPC
 * view (`jsonrpc_eth_*`), which the EVM index serves. TronGrid REST lists are not a node API.
 */
export function classifyTronFixture(doc: FixtureDoc): { wallet: TronWalletDoc } | { evm: EvmDoc } | Skipped {
  const name = baseName(doc.path);
  const kind = kindInFileName(name);
  const value = unwrapRpcResult(doc.json);
  const fileNumber = numberInFileName(name);
  const format = tronAddressFormat(value);
  if (kind.startsWith('jsonrpc_eth_getBlockByNumber')) return { evm: { kind: 'block', value, fileNumber, source: doc.path } };
  if (kind.startsWith('jsonrpc_eth_getTransactionByHash')) return { evm: { kind: 'tx', value, fileNumber, source: doc.path } };
  if (kind.startsWith('jsonrpc_eth_getTransactionReceipt')) return { evm: { kind: 'receipt', value, fileNumber, source: doc.path } };
  if (kind.startsWith('wallet_gettransactioninfobyblocknum')) {
    const list = Array.isArray(value) ? value.filter(isObject) : [];
    const number = typeof list[0]?.blockNumber === 'number' ? (list[0].blockNumber as number) : fileNumber;
    if (number === null) return { source: doc.path, reason: 'transaction info list without a block number' };
    return { wallet: { kind: 'blockInfos', value: list, number, format, source: doc.path } };
  }
  if (!isObject(value)) return { source: doc.path, reason: 'not an object' };
  if (kind.startsWith('wallet_getblockbynum') || kind.startsWith('wallet_getnowblock')) return { wallet: { kind: 'block', value, format, source: doc.path } };
  if (kind.startsWith('wallet_gettransactioninfobyid')) return { wallet: { kind: 'info', value, format, source: doc.path } };
  if (kind.startsWith('wallet_gettransactionbyid')) return { wallet: { kind: 'tx', value, format, source: doc.path } };
  return { source: doc.path, reason: `not a node API fixture (${JSON.stringify(kind)})`, expected: kind.startsWith('trongrid_') };
}

function blockNumberOf(block: JsonObject): number | null {
  const header = isObject(block.block_header) ? block.block_header : undefined;
  const raw = header && isObject(header.raw_data) ? header.raw_data : undefined;
  return typeof raw?.number === 'number' && Number.isSafeInteger(raw.number) ? raw.number : null;
}

export function emptyTronWallet(): TronWallet {
  return { blocks: new Map(), blockIds: new Map(), txs: new Map(), infos: new Map(), blockInfos: new Map(), head: null };
}

/** Indexes node-API fixtures. Pure. */
export function buildTronWallet(docs: readonly TronWalletDoc[]): { wallet: TronWallet; skipped: Skipped[] } {
  const wallet = emptyTronWallet();
  const skipped: Skipped[] = [];
  const order = ['block', 'blockInfos', 'tx', 'info'];
  for (const doc of [...docs].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))) {
    switch (doc.kind) {
      case 'block': {
        const n = blockNumberOf(doc.value);
        if (n === null || typeof doc.value.blockID !== 'string') {
          skipped.push({ source: doc.source, reason: 'block without blockID or number' });
          break;
        }
        wallet.blocks.set(n, { value: doc.value, format: doc.format });
        wallet.blockIds.set(doc.value.blockID.toLowerCase(), n);
        for (const tx of Array.isArray(doc.value.transactions) ? doc.value.transactions : []) {
          if (isObject(tx) && typeof tx.txID === 'string') wallet.txs.set(tx.txID.toLowerCase(), { value: tx, format: doc.format });
        }
        break;
      }
      case 'blockInfos':
        wallet.blockInfos.set(doc.number, { value: doc.value, format: doc.format });
        for (const info of doc.value) {
          if (typeof info.id === 'string') wallet.infos.set(info.id.toLowerCase(), { value: info, format: doc.format });
        }
        break;
      case 'tx':
        if (typeof doc.value.txID !== 'string') skipped.push({ source: doc.source, reason: 'transaction without txID' });
        else if (!wallet.txs.has(doc.value.txID.toLowerCase())) wallet.txs.set(doc.value.txID.toLowerCase(), { value: doc.value, format: doc.format });
        break;
      case 'info':
        if (typeof doc.value.id !== 'string') skipped.push({ source: doc.source, reason: 'transaction info without id' });
        else wallet.infos.set(doc.value.id.toLowerCase(), { value: doc.value, format: doc.format });
        break;
    }
  }
  wallet.head = wallet.blocks.size > 0 ? Math.max(...wallet.blocks.keys()) : null;
  return { wallet, skipped };
}

/** What a `/wallet/<method>` call answers: the body java-tron prints and the address format of it. */
export interface WalletAnswer {
  body: unknown;
  format: TronAddressFormat | null;
}

export type WalletMethod = (args: JsonObject) => WalletAnswer;

/** java-tron answers problems with HTTP 200 and `{"Error": "..."}`. */
export class WalletError extends Error {}

function numArg(args: JsonObject): number {
  const raw = args.num ?? 0;
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new WalletError(`class java.lang.NumberFormatException : For input string: ${JSON.stringify(String(raw))}`);
  return n;
}

function valueArg(args: JsonObject): string {
  const v = args.value;
  if (typeof v !== 'string' || !/^[0-9a-fA-F]{64}$/.test(v)) {
    throw new WalletError(`class org.tron.core.exception.BadItemException : invalid transaction id ${JSON.stringify(typeof v === 'string' ? v.slice(0, 80) : v ?? null)}`);
  }
  return v.toLowerCase();
}

const converted = new WeakMap<object, unknown>();

/**
 * The stored answer in the form the call's `visible` asks for (hex by default, as java-tron),
 * converted from the fixture's own form when that is the other one.
 */
function found<T extends object>(s: Stored<T> | undefined, empty: unknown, args: JsonObject): WalletAnswer {
  if (!s) return { body: empty, format: null };
  const format = wantedFormat(args.visible);
  if (format === s.format) return { body: s.value, format };
  let body = converted.get(s.value);
  if (body === undefined) {
    body = toTronAddressFormat(s.value, format);
    converted.set(s.value, body);
  }
  return { body, format };
}

/**
 * The node HTTP API methods served. Unknown blocks and transactions answer `{}` (and an unknown
 * block's infos `[]`), as java-tron does.
 */
export function tronWalletMethods(wallet: TronWallet): ReadonlyMap<string, WalletMethod> {
  return new Map<string, WalletMethod>([
    ['getnowblock', (args) => found(wallet.head === null ? undefined : wallet.blocks.get(wallet.head), {}, args)],
    ['getblockbynum', (args) => found(wallet.blocks.get(numArg(args)), {}, args)],
    [
      'getblockbyid',
      (args) => {
        const n = wallet.blockIds.get(valueArg(args));
        return found(n === undefined ? undefined : wallet.blocks.get(n), {}, args);
      },
    ],
    ['gettransactionbyid', (args) => found(wallet.txs.get(valueArg(args)), {}, args)],
    ['gettransactioninfobyid', (args) => found(wallet.infos.get(valueArg(args)), {}, args)],
    ['gettransactioninfobyblocknum', (args) => found(wallet.blockInfos.get(numArg(args)), [], args)],
  ]);
}
