import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { sha256 } from '@noble/hashes/sha2';
import { tronBase58ToHex, tronHexToBase58 } from './address';

/**
 * A Tron transaction's `raw_data` (java-tron's protocol `Transaction.raw`, Tron.proto), the part
 * a transaction's id hashes and its signature commits to: txID = sha256(raw_data bytes). The
 * wire format is protobuf, read and written with `@bufbuild/protobuf`'s wire codec; only the
 * fields a platform transfer uses are modelled, and one contract (Tron transactions hold one):
 *
 * raw: ref_block_bytes 1, ref_block_num 3, ref_block_hash 4, expiration 8, data 10 (the memo),
 * contract 11, timestamp 14, fee_limit 18. Contract: type 1, parameter 2 (google.protobuf.Any:
 * type_url 1, value 2), Permission_id 5. TransferContract: owner_address 1, to_address 2,
 * amount 3. TriggerSmartContract: owner_address 1, contract_address 2, call_value 3, data 4.
 *
 * Addresses are 21 bytes (`41` + account), here as `41…` hex; amounts in sun as bigint.
 */
export type TronContract =
  | { type: 'TransferContract'; owner: string; to: string; amount: bigint }
  | { type: 'TriggerSmartContract'; owner: string; contract: string; callValue: bigint; data: string };

export interface TronRawData {
  /** Bytes 6..8 of the reference block's number (hex, 2 bytes). */
  refBlockBytes: string;
  /** Bytes 8..16 of the reference block's id (hex, 8 bytes). */
  refBlockHash: string;
  /** Milliseconds since the epoch after which no node takes it. */
  expiration: number;
  /** Hex; THORChain reads a memo from it. Empty: absent. */
  data: string;
  contract: TronContract;
  timestamp: number;
  /** Sun an energy-consuming call may burn at most (contract calls); 0: absent. */
  feeLimit: bigint;
}

const CONTRACT_TYPES = { TransferContract: 1, TriggerSmartContract: 31 } as const;
const TYPE_URL_PREFIX = 'type.googleapis.com/protocol.';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => Buffer.from(h, 'hex');

function encodeParameter(c: TronContract): Uint8Array {
  const w = new BinaryWriter();
  if (c.type === 'TransferContract') {
    w.tag(1, WireType.LengthDelimited).bytes(bytes(c.owner));
    w.tag(2, WireType.LengthDelimited).bytes(bytes(c.to));
    if (c.amount !== 0n) w.tag(3, WireType.Varint).int64(c.amount);
  } else {
    w.tag(1, WireType.LengthDelimited).bytes(bytes(c.owner));
    w.tag(2, WireType.LengthDelimited).bytes(bytes(c.contract));
    if (c.callValue !== 0n) w.tag(3, WireType.Varint).int64(c.callValue);
    if (c.data) w.tag(4, WireType.LengthDelimited).bytes(bytes(c.data));
  }
  return w.finish();
}

/** The protobuf bytes of `raw_data`, fields in number order as java-tron writes them (proto3: zero values left out). */
export function encodeTronRawData(raw: TronRawData): Uint8Array {
  const any = new BinaryWriter().tag(1, WireType.LengthDelimited).string(TYPE_URL_PREFIX + raw.contract.type).tag(2, WireType.LengthDelimited).bytes(encodeParameter(raw.contract)).finish();
  const contract = new BinaryWriter().tag(1, WireType.Varint).int32(CONTRACT_TYPES[raw.contract.type]).tag(2, WireType.LengthDelimited).bytes(any).finish();
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).bytes(bytes(raw.refBlockBytes));
  w.tag(4, WireType.LengthDelimited).bytes(bytes(raw.refBlockHash));
  w.tag(8, WireType.Varint).int64(raw.expiration);
  if (raw.data) w.tag(10, WireType.LengthDelimited).bytes(bytes(raw.data));
  w.tag(11, WireType.LengthDelimited).bytes(contract);
  w.tag(14, WireType.Varint).int64(raw.timestamp);
  if (raw.feeLimit !== 0n) w.tag(18, WireType.Varint).int64(raw.feeLimit);
  return w.finish();
}

/** Reads the fields of one message: each field number's values in order (varints as bigint, the rest as bytes). */
function fields(buf: Uint8Array): Map<number, (bigint | Uint8Array)[]> {
  const r = new BinaryReader(buf);
  const out = new Map<number, (bigint | Uint8Array)[]>();
  while (r.pos < r.len) {
    const [no, wire] = r.tag();
    let v: bigint | Uint8Array;
    if (wire === WireType.Varint) v = BigInt(r.int64());
    else if (wire === WireType.LengthDelimited) v = r.bytes();
    else {
      r.skip(wire, no);
      continue;
    }
    out.set(no, [...(out.get(no) ?? []), v]);
  }
  return out;
}

function one<T extends bigint | Uint8Array>(f: Map<number, (bigint | Uint8Array)[]>, no: number, kind: 'varint' | 'bytes', what: string): T | undefined {
  const list = f.get(no);
  if (!list) return undefined;
  if (list.length > 1 && kind === 'varint') throw new Error(`${what} appears twice`);
  const v = list[list.length - 1];
  if (kind === 'varint' ? typeof v !== 'bigint' : !(v instanceof Uint8Array)) throw new Error(`${what} has the wrong wire type`);
  return v as T;
}

const safeMs = (v: bigint | undefined, what: string): number => {
  if (v === undefined) return 0;
  if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${what} is out of range`);
  return Number(v);
};

/**
 * Decodes `raw_data` bytes; throws for anything that is not a one-contract TRX transfer or
 * smart-contract call (another contract type, several contracts, malformed protobuf).
 */
export function decodeTronRawData(buf: Uint8Array): TronRawData {
  const f = fields(buf);
  const contracts = f.get(11) ?? [];
  if (contracts.length !== 1 || !(contracts[0] instanceof Uint8Array)) throw new Error(`raw_data holds ${contracts.length} contracts, not one`);
  const c = fields(contracts[0]);
  const type = Number(one<bigint>(c, 1, 'varint', 'contract type') ?? 0n);
  const any = one<Uint8Array>(c, 2, 'bytes', 'contract parameter');
  if (!any) throw new Error('the contract has no parameter');
  const a = fields(any);
  const typeUrl = Buffer.from(one<Uint8Array>(a, 1, 'bytes', 'type_url') ?? new Uint8Array()).toString('utf8');
  const p = fields(one<Uint8Array>(a, 2, 'bytes', 'parameter value') ?? new Uint8Array());
  const addr = (no: number, what: string) => {
    const v = one<Uint8Array>(p, no, 'bytes', what);
    if (!v || v.length !== 21 || v[0] !== 0x41) throw new Error(`${what} is not a Tron address`);
    return hex(v);
  };
  let contract: TronContract;
  if (type === CONTRACT_TYPES.TransferContract && typeUrl === `${TYPE_URL_PREFIX}TransferContract`) {
    contract = { type: 'TransferContract', owner: addr(1, 'owner_address'), to: addr(2, 'to_address'), amount: one<bigint>(p, 3, 'varint', 'amount') ?? 0n };
  } else if (type === CONTRACT_TYPES.TriggerSmartContract && typeUrl === `${TYPE_URL_PREFIX}TriggerSmartContract`) {
    if (p.has(5) || p.has(6)) throw new Error('the call also sends a TRC-10 token');
    contract = { type: 'TriggerSmartContract', owner: addr(1, 'owner_address'), contract: addr(2, 'contract_address'), callValue: one<bigint>(p, 3, 'varint', 'call_value') ?? 0n, data: hex(one<Uint8Array>(p, 4, 'bytes', 'data') ?? new Uint8Array()) };
  } else throw new Error(`contract type ${type} (${typeUrl}) is neither a TRX transfer nor a smart-contract call`);
  if (c.has(5) && one<bigint>(c, 5, 'varint', 'Permission_id') !== 0n) throw new Error('the contract uses another permission than the owner');
  return {
    refBlockBytes: hex(one<Uint8Array>(f, 1, 'bytes', 'ref_block_bytes') ?? new Uint8Array()),
    refBlockHash: hex(one<Uint8Array>(f, 4, 'bytes', 'ref_block_hash') ?? new Uint8Array()),
    expiration: safeMs(one<bigint>(f, 8, 'varint', 'expiration'), 'expiration'),
    data: hex(one<Uint8Array>(f, 10, 'bytes', 'data') ?? new Uint8Array()),
    contract,
    timestamp: safeMs(one<bigint>(f, 14, 'varint', 'timestamp'), 'timestamp'),
    feeLimit: one<bigint>(f, 18, 'varint', 'fee_limit') ?? 0n,
  };
}

/** A transaction's id: sha256 of its raw_data bytes (hex, lower case). */
export function tronTxId(rawDataHex: string): string {
  return hex(sha256(bytes(rawDataHex)));
}

type Json = Record<string, unknown>;
const num = (v: unknown, what: string): bigint => {
  if (v === undefined) return 0n;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^[0-9]+$/.test(v)) return BigInt(v);
  throw new Error(`${what} is not an integer`);
};
const hexField = (v: unknown, what: string): string => {
  if (v === undefined) return '';
  if (typeof v !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(v)) throw new Error(`${what} is not hex`);
  return v.toLowerCase();
};
const addrField = (v: unknown, what: string): string => {
  const h = typeof v === 'string' ? (v.startsWith('T') ? tronBase58ToHex(v) : /^41[0-9a-fA-F]{40}$/.test(v) ? v.toLowerCase() : undefined) : undefined;
  if (!h) throw new Error(`${what} is not a Tron address`);
  return h;
};

/** The `raw_data` JSON java-tron prints (either `visible` form) as the decoded model; throws on what it does not model. */
export function tronRawDataFromJson(json: unknown): TronRawData {
  const raw = (json ?? {}) as Json;
  const list = Array.isArray(raw.contract) ? raw.contract : [];
  if (list.length !== 1) throw new Error(`raw_data holds ${list.length} contracts, not one`);
  const c = list[0] as Json;
  const value = ((c.parameter as Json | undefined)?.value ?? {}) as Json;
  let contract: TronContract;
  if (c.type === 'TransferContract') contract = { type: 'TransferContract', owner: addrField(value.owner_address, 'owner_address'), to: addrField(value.to_address, 'to_address'), amount: num(value.amount, 'amount') };
  else if (c.type === 'TriggerSmartContract') {
    contract = { type: 'TriggerSmartContract', owner: addrField(value.owner_address, 'owner_address'), contract: addrField(value.contract_address, 'contract_address'), callValue: num(value.call_value, 'call_value'), data: hexField(value.data, 'data') };
  } else throw new Error(`contract type ${String(c.type)} is neither a TRX transfer nor a smart-contract call`);
  return {
    refBlockBytes: hexField(raw.ref_block_bytes, 'ref_block_bytes'),
    refBlockHash: hexField(raw.ref_block_hash, 'ref_block_hash'),
    expiration: Number(num(raw.expiration, 'expiration')),
    data: hexField(raw.data, 'data'),
    contract,
    timestamp: Number(num(raw.timestamp, 'timestamp')),
    feeLimit: num(raw.fee_limit, 'fee_limit'),
  };
}

/** The `raw_data` JSON as java-tron prints it: addresses Base58 with `visible`, `41…` hex without. */
export function tronRawDataToJson(raw: TronRawData, visible: boolean): Json {
  const a = (h: string) => (visible ? tronHexToBase58(h)! : h);
  const c = raw.contract;
  const value: Json =
    c.type === 'TransferContract'
      ? { amount: Number(c.amount), owner_address: a(c.owner), to_address: a(c.to) }
      : { ...(c.data ? { data: c.data } : {}), owner_address: a(c.owner), contract_address: a(c.contract), ...(c.callValue !== 0n ? { call_value: Number(c.callValue) } : {}) };
  return {
    ...(raw.data ? { data: raw.data } : {}),
    contract: [{ parameter: { value, type_url: TYPE_URL_PREFIX + c.type }, type: c.type }],
    ref_block_bytes: raw.refBlockBytes,
    ref_block_hash: raw.refBlockHash,
    expiration: raw.expiration,
    ...(raw.feeLimit !== 0n ? { fee_limit: Number(raw.feeLimit) } : {}),
    ...(raw.timestamp !== 0 ? { timestamp: raw.timestamp } : {}),
  };
}

/**
 * The `41…` address of the key that made a Tron signature (65 bytes hex: r‖s‖recovery, the last
 * byte 0/1 or 27/28) over a txID; undefined for a malformed or high-S signature.
 */
export function tronSignerOf(txId: string, signatureHex: string): string | undefined {
  if (!/^[0-9a-fA-F]{130}$/.test(signatureHex) || !/^[0-9a-fA-F]{64}$/.test(txId)) return undefined;
  let v = parseInt(signatureHex.slice(128), 16);
  if (v >= 27) v -= 27;
  if (v !== 0 && v !== 1) return undefined;
  try {
    const sig = new secp256k1.Signature(BigInt(`0x${signatureHex.slice(0, 64)}`), BigInt(`0x${signatureHex.slice(64, 128)}`)).addRecoveryBit(v);
    const point = sig.recoverPublicKey(txId.toLowerCase()).toRawBytes(false);
    return `41${hex(keccak_256(point.subarray(1))).slice(24)}`;
  } catch {
    return undefined;
  }
}
