import { invalidParams, type RpcParams } from '../json-rpc';
import { isObject } from './json';

/**
 * Argument readers with geth's rules and messages: positional arguments only, strict hex
 * quantities (no leading zeros), 32-byte hashes and 20-byte addresses.
 */

export function positional(params: RpcParams): unknown[] {
  if (params === undefined) return [];
  if (!Array.isArray(params)) throw invalidParams('non-array args');
  return params;
}

export function requiredArg(args: unknown[], index: number): unknown {
  if (args.length <= index || args[index] === undefined) throw invalidParams(`missing value for required argument ${index}`);
  return args[index];
}

export function parseQuantity(v: unknown, index: number): number {
  if (typeof v !== 'string') throw invalidParams(`invalid argument ${index}: json: cannot unmarshal non-string into Go value of type hexutil.Uint64`);
  if (!/^0x/i.test(v)) throw invalidParams(`invalid argument ${index}: hex string without 0x prefix`);
  const digits = v.slice(2);
  if (digits.length === 0) throw invalidParams(`invalid argument ${index}: hex string "0x"`);
  if (!/^[0-9a-fA-F]+$/.test(digits)) throw invalidParams(`invalid argument ${index}: invalid hex string`);
  if (digits.length > 1 && digits[0] === '0') throw invalidParams(`invalid argument ${index}: hex number with leading zero digits`);
  const n = Number.parseInt(digits, 16);
  if (digits.length > 16 || !Number.isSafeInteger(n)) throw invalidParams(`invalid argument ${index}: hex number > 64 bits`);
  return n;
}

export function parseBool(v: unknown, index: number): boolean {
  if (typeof v !== 'boolean') throw invalidParams(`invalid argument ${index}: json: cannot unmarshal ${describe(v)} into Go value of type bool`);
  return v;
}

export function parseHash(v: unknown, index: number): string {
  if (typeof v !== 'string') throw invalidParams(`invalid argument ${index}: json: cannot unmarshal ${describe(v)} into Go value of type common.Hash`);
  if (!/^0x[0-9a-fA-F]*$/.test(v)) throw invalidParams(`invalid argument ${index}: hex string without 0x prefix`);
  if (v.length !== 66) throw invalidParams(`invalid argument ${index}: hex string has length ${v.length - 2}, want 64 for common.Hash`);
  return v.toLowerCase();
}

export function parseAddress(v: unknown, index: number): string {
  if (typeof v !== 'string') throw invalidParams(`invalid argument ${index}: json: cannot unmarshal ${describe(v)} into Go value of type common.Address`);
  if (!/^0x[0-9a-fA-F]*$/.test(v)) throw invalidParams(`invalid argument ${index}: hex string without 0x prefix`);
  if (v.length !== 42) throw invalidParams(`invalid argument ${index}: hex string has length ${v.length - 2}, want 40 for common.Address`);
  return v.toLowerCase();
}

export type BlockSelector = { number: number } | { hash: string };

const HEAD_TAGS = new Set(['latest', 'pending', 'safe', 'finalized']);

/** A block number argument: a hex quantity or a tag. */
export function parseBlockNumber(v: unknown, index: number, head: number): number {
  if (typeof v === 'string' && HEAD_TAGS.has(v)) return head;
  if (v === 'earliest') return 0;
  return parseQuantity(v, index);
}

/** geth's BlockNumberOrHash: a number or tag, a 32-byte hash, or `{blockNumber}` / `{blockHash}`. */
export function parseBlockSelector(v: unknown, index: number, head: number): BlockSelector {
  if (isObject(v)) {
    if (v.blockHash !== undefined && v.blockNumber !== undefined) throw invalidParams(`invalid argument ${index}: cannot specify both BlockHash and BlockNumber, choose one or the other`);
    if (v.blockHash !== undefined) return { hash: parseHash(v.blockHash, index) };
    if (v.blockNumber !== undefined) return { number: parseBlockNumber(v.blockNumber, index, head) };
    throw invalidParams(`invalid argument ${index}: hex string without 0x prefix`);
  }
  if (typeof v === 'string' && v.length === 66 && /^0x[0-9a-fA-F]{64}$/.test(v)) return { hash: v.toLowerCase() };
  return { number: parseBlockNumber(v, index, head) };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : 'object';
}
