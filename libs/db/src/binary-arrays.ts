/**
 * Number arrays as statement parameters in Postgres's binary array format (what `array_send`
 * writes and `array_recv` reads), for statements that pass whole columns (`unnest($1::float8[],
 * …)`). node-postgres sends a Buffer parameter as binary, so a column of 20,000 numbers costs a
 * copy of 8 bytes each instead of a number-to-text conversion in the process and a text-to-number
 * parse in Postgres per element (together most of the time of building and reading such a
 * parameter). The parameter's cast names the array's type; the element type written here must
 * be the same, or Postgres refuses the value.
 *
 * Layout: dimensions (1, or 0 when empty), a has-nulls flag, the element type's OID, the length
 * and lower bound (1) of the dimension, then each element as its byte length (-1: NULL) and its
 * big-endian bytes.
 */

const OID = { int4: 23, int8: 20, float8: 701 } as const;

/**
 * Thrown for a value the column's type cannot hold (a fraction or a number out of range for an
 * integer type), with the SQLSTATE Postgres gives the same value sent as text (22003,
 * numeric_value_out_of_range), so callers tell it from a failure that a retry could cure.
 */
export class ArrayValueError extends RangeError {
  readonly code = '22003';
}

function arrayBuffer(n: number, nulls: number, oid: number, width: number): Buffer {
  if (n === 0) {
    const empty = Buffer.alloc(12);
    empty.writeInt32BE(oid, 8);
    return empty;
  }
  const buf = Buffer.allocUnsafe(20 + n * 4 + (n - nulls) * width);
  buf.writeInt32BE(1, 0);
  buf.writeInt32BE(nulls > 0 ? 1 : 0, 4);
  buf.writeInt32BE(oid, 8);
  buf.writeInt32BE(n, 12);
  buf.writeInt32BE(1, 16);
  return buf;
}

function countNulls(values: readonly (number | null)[]): number {
  let nulls = 0;
  for (let i = 0; i < values.length; i++) if (values[i] === null) nulls++;
  return nulls;
}

/** A `float8[]` parameter; null elements are NULL. */
export function float8Array(values: readonly (number | null)[]): Buffer {
  const nulls = countNulls(values);
  const buf = arrayBuffer(values.length, nulls, OID.float8, 8);
  let at = 20;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null) {
      buf.writeInt32BE(-1, at);
      at += 4;
    } else {
      buf.writeInt32BE(8, at);
      buf.writeDoubleBE(v, at + 4);
      at += 12;
    }
  }
  return buf;
}

/** An `int8[]` (bigint) parameter of safe integers (JavaScript numbers hold no others exactly). */
export function int8Array(values: readonly number[]): Buffer {
  const buf = arrayBuffer(values.length, 0, OID.int8, 8);
  let at = 20;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isSafeInteger(v)) throw new ArrayValueError(`bigint array element ${v} is not a safe integer`);
    // High and low 32 bits by arithmetic: exact for safe integers, negative ones included.
    const high = Math.floor(v / 0x1_0000_0000);
    buf.writeInt32BE(8, at);
    buf.writeInt32BE(high, at + 4);
    buf.writeUInt32BE(v - high * 0x1_0000_0000, at + 8);
    at += 12;
  }
  return buf;
}

/** An `int4[]` (integer) parameter. */
export function int4Array(values: readonly number[]): Buffer {
  const buf = arrayBuffer(values.length, 0, OID.int4, 4);
  let at = 20;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isInteger(v) || v < -0x8000_0000 || v > 0x7fff_ffff) throw new ArrayValueError(`integer array element ${v} is out of range`);
    buf.writeInt32BE(4, at);
    buf.writeInt32BE(v, at + 4);
    at += 8;
  }
  return buf;
}
