import { nativeCrc32c, useNativeCrc32c } from './crc32c';
import { KAFKAJS_MODULES, encoderOf, kafkajsEncoderPrototype, replaceKafkajsModule, wrapKafkajsModule, type EncoderLike } from './kafkajs-modules';

/**
 * kafkajs encodes each record of a produce request through its generic `Encoder`: a zero-filled
 * 512-byte buffer per record, grown by doubling (a new zero-filled buffer and a copy) for any
 * value past it, and a `Buffer.from` of a byte array for every varint. For records of a kilobyte
 * or two, as the aggregator sends one per pool, that was about a third of the producer's CPU. This
 * encoder writes the same bytes (magic v2 record: length, attributes, timestamp and offset deltas,
 * key, value, headers), and an uncompressed record batch's header and all of its records into one
 * buffer of the batch's exact size. kafkajs has no option for it, so the modules its produce
 * request requires (`recordBatch/record/v0` and `recordBatch/v0`, loaded on the first produce)
 * are replaced (kafkajs-modules.ts), with the same contracts: a record's fields in, an `Encoder`
 * of its bytes out (written when the batch is); a batch's fields and records in, an `Encoder` of
 * its bytes out.
 */

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

/** A record measured: its fields, and the lengths its bytes are written with. */
interface MeasuredRecord {
  fields: RecordFields;
  /** Bytes of the whole record, its length varint included. */
  size: number;
  body: number;
  keyLength: number;
  valueLength: number;
  longDelta: number[] | undefined;
  headerList: { name: string; value: Bytes; nameLength: number; valueLength: number }[];
}

function measureRecord(fields: RecordFields): MeasuredRecord {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = fields;
  // Each header value its own entry (an array value is several), measured once: kafkajs measures
  // a header value with Buffer.byteLength, a null one included (it throws).
  const headerList: MeasuredRecord['headerList'] = [];
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
  return { fields, size: varintSize(body) + body, body, keyLength, valueLength, longDelta, headerList };
}

/** Writes a measured record at `at` of `buf`; returns where it ends. */
function writeRecord(buf: Buffer, at: number, m: MeasuredRecord): number {
  const { offsetDelta = 0, timestampDelta = 0, key, value } = m.fields;
  at = writeVarint(buf, at, m.body);
  buf[at++] = 0; // attributes: none used
  if (m.longDelta) for (const b of m.longDelta) buf[at++] = b;
  else at = writeVarint(buf, at, timestampDelta);
  at = writeVarint(buf, at, offsetDelta);
  at = writeBytes(buf, at, key, m.keyLength);
  at = writeBytes(buf, at, value, m.valueLength);
  at = writeVarint(buf, at, m.headerList.length);
  for (const h of m.headerList) {
    at = writeBytes(buf, at, h.name, h.nameLength);
    at = writeBytes(buf, at, h.value, h.valueLength);
  }
  return at;
}

/** The record's bytes, as kafkajs' `Record` (record/v0) writes them. */
export function encodeRecord(fields: RecordFields): Buffer {
  const m = measureRecord(fields);
  const buf = Buffer.allocUnsafe(m.size);
  writeRecord(buf, 0, m);
  return buf;
}

/**
 * What kafkajs' produce request gets for each record: the record measured, its bytes written
 * only by the batch that holds it (exactRecordBatch), straight into the batch's buffer. It is an
 * Encoder too (its prototype is kafkajs' Encoder's, from useExactRecords on): asked for its `buf`,
 * as kafkajs' own batch encoder would (a compressed batch), it writes its bytes then.
 */
class PendingRecord {
  private bytes?: Buffer;

  constructor(readonly measured: MeasuredRecord) {}

  get buf(): Buffer {
    if (!this.bytes) {
      this.bytes = Buffer.allocUnsafe(this.measured.size);
      writeRecord(this.bytes, 0, this.measured);
    }
    return this.bytes;
  }

  get offset(): number {
    return this.measured.size;
  }
}

/** What kafkajs' produce request calls per record. */
function exactRecord(fields: RecordFields): PendingRecord {
  return new PendingRecord(measureRecord(fields));
}

/** The fields kafkajs' produce request passes its record batch encoder (recordBatch/v0). */
export interface RecordBatchFields {
  compression?: number;
  firstOffset?: unknown;
  firstTimestamp?: number;
  maxTimestamp?: number;
  partitionLeaderEpoch?: number;
  lastOffsetDelta?: number;
  transactional?: boolean;
  producerId?: unknown;
  producerEpoch?: number;
  firstSequence?: number;
  records?: unknown[];
}

type RecordBatchEncoder = (fields: RecordBatchFields) => Promise<EncoderLike>;

/** kafkajs' 64-bit integer (utils/long): what its Encoder writes an int64 from. */
interface KafkajsLong {
  getHighBits(): number;
  getLowBits(): number;
}
let Long: { fromValue(v: unknown): KafkajsLong; fromInt(v: number): unknown } | undefined;
let kafkajsRecordBatch: RecordBatchEncoder | undefined;

const COMPRESSION_NONE = 0;
const MAGIC_BYTE = 2;
const TRANSACTIONAL_MASK = 16;
/** Bytes of a batch before its records: first offset, length, leader epoch … record count. */
const BATCH_HEADER = 61;
/** Where the checksummed part (attributes onwards) begins, and where the checksum goes. */
const CRC_AT = 17;
const ATTRIBUTES_AT = 21;

function writeInt64(buf: Buffer, at: number, value: unknown): void {
  const long = Long!.fromValue(value);
  buf.writeInt32BE(long.getHighBits(), at);
  buf.writeInt32BE(long.getLowBits(), at + 4);
}

/**
 * kafkajs' `RecordBatch` (recordBatch/v0) for uncompressed batches of PendingRecords: the
 * batch's header and every record written into one buffer of the batch's exact size, its
 * checksum computed over that buffer in place. kafkajs writes each record into a buffer of its
 * own, then copies them into a growing body, the body into a growing batch and the batch into
 * another encoder with its offset: at 10,000 pools a produce request of the aggregator was about
 * 5 µs a tick, most of it those buffers and copies. A compressed batch, or records not written
 * by exactRecord, go to kafkajs' own.
 */
async function exactRecordBatch(fields: RecordBatchFields): Promise<EncoderLike> {
  const records = fields.records ?? [];
  if ((fields.compression ?? COMPRESSION_NONE) !== COMPRESSION_NONE || !records.every((r) => r instanceof PendingRecord)) return kafkajsRecordBatch!(fields);
  const pending = records as PendingRecord[];
  let size = BATCH_HEADER;
  for (const r of pending) size += r.measured.size;
  const buf = Buffer.allocUnsafe(size);
  const now = Date.now();
  writeInt64(buf, 0, fields.firstOffset ?? Long!.fromInt(0));
  buf.writeInt32BE(size - 12, 8);
  buf.writeInt32BE(fields.partitionLeaderEpoch ?? 0, 12);
  buf.writeInt8(MAGIC_BYTE, 16);
  buf.writeInt16BE(COMPRESSION_NONE | (fields.transactional ? TRANSACTIONAL_MASK : 0), ATTRIBUTES_AT);
  buf.writeInt32BE(fields.lastOffsetDelta ?? 0, 23);
  writeInt64(buf, 27, fields.firstTimestamp ?? now);
  writeInt64(buf, 35, fields.maxTimestamp ?? now);
  writeInt64(buf, 43, fields.producerId ?? Long!.fromValue(-1));
  buf.writeInt16BE(fields.producerEpoch ?? 0, 51);
  buf.writeInt32BE(fields.firstSequence ?? 0, 53);
  buf.writeInt32BE(pending.length, 57);
  let at = BATCH_HEADER;
  for (const r of pending) at = writeRecord(buf, at, r.measured);
  buf.writeUInt32BE(nativeCrc32c(buf.subarray(ATTRIBUTES_AT, at)), CRC_AT);
  return encoderOf(buf);
}

/**
 * Makes kafkajs encode its records with exactRecord and its uncompressed record batches with
 * exactRecordBatch from its first produce request on; true when it does (also when already
 * done). False when kafkajs loaded its own before (a produce in this process before this call)
 * or its layout changed: it then keeps its own, which writes the same bytes.
 */
export function useExactRecords(): boolean {
  let encoderPrototype: object;
  try {
    // kafkajs' internal modules, untyped: what its record batch encoder expects of a record.
    encoderPrototype = kafkajsEncoderPrototype();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    Long ??= require(KAFKAJS_MODULES.long) as typeof Long;
  } catch {
    return false;
  }
  if (Object.getPrototypeOf(PendingRecord.prototype) !== encoderPrototype) Object.setPrototypeOf(PendingRecord.prototype, encoderPrototype);
  return replaceKafkajsModule(KAFKAJS_MODULES.record, exactRecord) && useExactRecordBatches();
}

/**
 * The record batch module is replaced in place: its own is loaded first (exactRecordBatch falls
 * back on it, and kafkajs' fetch decoder reads its MAGIC_BYTE), then its cached exports swapped,
 * before kafkajs' produce request requires it.
 */
function useExactRecordBatches(): boolean {
  // Its own requires the checksum module: the native one there first (crc32c.ts).
  useNativeCrc32c();
  return wrapKafkajsModule<{ RecordBatch: RecordBatchEncoder; MAGIC_BYTE: number }>(
    KAFKAJS_MODULES.recordBatch,
    (own) => {
      if (own.MAGIC_BYTE !== MAGIC_BYTE) return undefined;
      kafkajsRecordBatch = own.RecordBatch;
      return { ...own, RecordBatch: exactRecordBatch };
    },
    (exports) => (exports as { RecordBatch?: unknown }).RecordBatch === exactRecordBatch,
  );
}
