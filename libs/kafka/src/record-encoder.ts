import { replaceKafkajsModule } from './kafkajs-modules';

/**
 * kafkajs encodes each record of a produce request through its generic `Encoder`: a zero-filled
 * 512-byte buffer per record, grown by doubling (a new zero-filled buffer and a copy) for any
 * value past it, and a `Buffer.from` of a byte array for every varint. For records of a kilobyte
 * or two, as the aggregator sends one per pool, that was about a third of the producer's CPU. This
 * encoder writes the same bytes (magic v2 record: length, attributes, timestamp and offset deltas,
 * key, value, headers) into one buffer of the record's exact size. kafkajs has no option for it,
 * so the module its produce request requires (`recordBatch/record/v0`, loaded on the first
 * produce) is replaced (kafkajs-modules.ts), with the same contract: the record's fields in, an
 * `Encoder` holding its bytes out.
 */
const RECORD_MODULE = 'kafkajs/src/protocol/recordBatch/record/v0/index.js';
const ENCODER_MODULE = 'kafkajs/src/protocol/encoder.js';

type Bytes = Buffer | string | null | undefined;

export interface RecordFields {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: Bytes;
  value?: Bytes;
  headers?: Record<string, Bytes | Bytes[]>;
}

/*
 * Varints as kafkajs writes them: zig-zag, then base 128, low group first. A varint (lengths,
 * the offset delta) takes 32-bit arithmetic (JavaScript's shifts, as kafkajs' `writeVarInt`); the
 * timestamp delta is a varlong, 64-bit (kafkajs' `Long`, a BigInt), which for a value within
 * 32 bits writes the same bytes as the varint.
 */

function varintSize(value: number): number {
  let zz = ((value << 1) ^ (value >> 31)) >>> 0;
  let n = 1;
  while (zz >= 0x80) {
    zz >>>= 7;
    n++;
  }
  return n;
}

function writeVarint(buf: Buffer, at: number, value: number): number {
  let zz = ((value << 1) ^ (value >> 31)) >>> 0;
  while (zz >= 0x80) {
    buf[at++] = (zz & 0x7f) | 0x80;
    zz >>>= 7;
  }
  buf[at++] = zz;
  return at;
}

/** A varlong's bytes (kafkajs' `Long.fromValue`: NaN is 0; a fraction throws, as there). */
function varlongBytes(value: number): number[] {
  const v = Number.isNaN(value) ? 0n : BigInt(value);
  let zz = ((v << 1n) ^ (v >> 63n)) & 0xffff_ffff_ffff_ffffn;
  const out: number[] = [];
  while (zz >= 0x80n) {
    out.push(Number(zz & 0x7fn) | 0x80);
    zz >>= 7n;
  }
  out.push(Number(zz));
  return out;
}

const isInt32 = (v: number): boolean => (v | 0) === v;

/** A field's byte length as kafkajs reads it (-1: null); a non-string, non-Buffer value throws as there. */
const lengthOf = (v: Bytes): number => (v == null ? -1 : Buffer.isBuffer(v) ? v.length : Buffer.byteLength(v));

function writeBytes(buf: Buffer, at: number, v: Bytes, length: number): number {
  at = writeVarint(buf, at, length);
  if (length <= 0 || v == null) return at;
  if (Buffer.isBuffer(v)) return at + v.copy(buf, at);
  return at + buf.write(String(v), at, length, 'utf8');
}

/** The record's bytes, as kafkajs' `Record` (record/v0) writes them. */
export function encodeRecord({ offsetDelta = 0, timestampDelta = 0, key, value, headers = {} }: RecordFields): Buffer {
  // Each header value its own entry (an array value is several), measured once: kafkajs measures
  // a header value with Buffer.byteLength, a null one included (it throws).
  const headerList: { name: string; value: Bytes; nameLength: number; valueLength: number }[] = [];
  const addHeader = (name: string, v: Bytes) => headerList.push({ name, value: v, nameLength: Buffer.byteLength(name), valueLength: Buffer.isBuffer(v) ? v.length : Buffer.byteLength(v as string) });
  for (const name of Object.keys(headers)) {
    const hv = headers[name];
    if (Array.isArray(hv)) for (const one of hv) addHeader(name, one);
    else addHeader(name, hv);
  }
  const keyLength = lengthOf(key);
  const valueLength = lengthOf(value);
  const longDelta = isInt32(timestampDelta) ? undefined : varlongBytes(timestampDelta);
  let body = 1 + (longDelta?.length ?? varintSize(timestampDelta)) + varintSize(offsetDelta) + varintSize(keyLength) + Math.max(keyLength, 0) + varintSize(valueLength) + Math.max(valueLength, 0);
  body += varintSize(headerList.length);
  for (const h of headerList) body += varintSize(h.nameLength) + h.nameLength + varintSize(h.valueLength) + h.valueLength;
  const buf = Buffer.allocUnsafe(varintSize(body) + body);
  let at = writeVarint(buf, 0, body);
  buf[at++] = 0; // attributes: none used
  if (longDelta) for (const b of longDelta) buf[at++] = b;
  else at = writeVarint(buf, at, timestampDelta);
  at = writeVarint(buf, at, offsetDelta);
  at = writeBytes(buf, at, key, keyLength);
  at = writeBytes(buf, at, value, valueLength);
  at = writeVarint(buf, at, headerList.length);
  for (const h of headerList) {
    at = writeBytes(buf, at, h.name, h.nameLength);
    at = writeBytes(buf, at, h.value, h.valueLength);
  }
  return buf;
}

/** kafkajs' Encoder class's prototype, read once kafkajs is there (useExactRecords). */
let encoderPrototype: object | undefined;

interface EncoderLike {
  buf: Buffer;
  offset: number;
}

/**
 * Makes kafkajs encode its records with `encodeRecord` from its first produce request on; true
 * when it does (also when already done). False when kafkajs loaded its own before (a produce in
 * this process before this call) or its layout changed: it then keeps its own, which writes the
 * same bytes.
 */
export function useExactRecords(): boolean {
  try {
    // kafkajs' internal module, untyped: what its record batch encoder expects of a record.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    encoderPrototype ??= (require(ENCODER_MODULE) as { prototype: object }).prototype;
  } catch {
    return false;
  }
  return replaceKafkajsModule(RECORD_MODULE, exactRecord);
}

/** What kafkajs' produce request calls per record: an Encoder whose buffer is the record. */
function exactRecord(fields: RecordFields): EncoderLike {
  const buf = encodeRecord(fields);
  const encoder = Object.create(encoderPrototype!) as EncoderLike;
  encoder.buf = buf;
  encoder.offset = buf.length;
  return encoder;
}
