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

/**
 * The array's buffer with its header written, and a DataView of it: DataView's setters compile
 * to plain stores, where Buffer's write methods are calls with checks of their own.
 */
function arrayBuffer(n: number, nulls: number, oid: number, width: number): { buf: Buffer; view: DataView } {
  const buf = n === 0 ? Buffer.alloc(12) : Buffer.allocUnsafe(20 + n * 4 + (n - nulls) * width);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  view.setInt32(8, oid);
  if (n === 0) return { buf, view };
  view.setInt32(0, 1);
  view.setInt32(4, nulls > 0 ? 1 : 0);
  view.setInt32(12, n);
  view.setInt32(16, 1);
  return { buf, view };
}

function countNulls<T>(rows: readonly T[], value: (row: T) => number | null): number {
  let nulls = 0;
  for (let i = 0; i < rows.length; i++) if (value(rows[i]) === null) nulls++;
  return nulls;
}

/*
 * One field in Postgres's binary form, as an array element and a copied row's field alike: its
 * byte length (-1: NULL), then its big-endian bytes. Each writes at `at` and returns where the
 * field ends; a value the type cannot hold throws before anything is written.
 */

export function setInt4Field(view: DataView, at: number, v: number): number {
  if (!Number.isInteger(v) || v < -0x8000_0000 || v > 0x7fff_ffff) throw new ArrayValueError(`integer ${v} is out of range`);
  view.setInt32(at, 4);
  view.setInt32(at + 4, v);
  return at + 8;
}

/** A bigint of a safe integer (JavaScript numbers hold no others exactly). */
export function setInt8Field(view: DataView, at: number, v: number): number {
  if (!Number.isSafeInteger(v)) throw new ArrayValueError(`bigint ${v} is not a safe integer`);
  // High and low 32 bits by arithmetic: exact for safe integers, negative ones included.
  const high = Math.floor(v / 0x1_0000_0000);
  view.setInt32(at, 8);
  view.setInt32(at + 4, high);
  view.setUint32(at + 8, v - high * 0x1_0000_0000);
  return at + 12;
}

/** A float8; null is NULL. */
export function setFloat8Field(view: DataView, at: number, v: number | null): number {
  if (v === null) {
    view.setInt32(at, -1);
    return at + 4;
  }
  view.setInt32(at, 8);
  view.setFloat64(at + 4, v);
  return at + 12;
}

const itself = <V>(v: V): V => v;

/** A `float8[]` parameter; null elements are NULL. */
export function float8Array(values: readonly (number | null)[]): Buffer {
  return float8Column(values, itself);
}

/**
 * A `float8[]` parameter of one field of each row, read straight into the buffer: an array of
 * the values first would box each fractional number (an allocation apiece) to hold it.
 */
export function float8Column<T>(rows: readonly T[], value: (row: T) => number | null): Buffer {
  const { buf, view } = arrayBuffer(rows.length, countNulls(rows, value), OID.float8, 8);
  let at = 20;
  for (let i = 0; i < rows.length; i++) at = setFloat8Field(view, at, value(rows[i]));
  return buf;
}

/** An `int8[]` (bigint) parameter of safe integers (JavaScript numbers hold no others exactly). */
export function int8Array(values: readonly number[]): Buffer {
  return int8Column(values, itself);
}

/** An `int8[]` parameter of one field of each row (as float8Column). */
export function int8Column<T>(rows: readonly T[], value: (row: T) => number): Buffer {
  const { buf, view } = arrayBuffer(rows.length, 0, OID.int8, 8);
  let at = 20;
  for (let i = 0; i < rows.length; i++) at = setInt8Field(view, at, value(rows[i]));
  return buf;
}

/** An `int4[]` (integer) parameter. */
export function int4Array(values: readonly number[]): Buffer {
  return int4Column(values, itself);
}

/** An `int4[]` parameter of one field of each row (as float8Column). */
export function int4Column<T>(rows: readonly T[], value: (row: T) => number): Buffer {
  const { buf, view } = arrayBuffer(rows.length, 0, OID.int4, 4);
  let at = 20;
  for (let i = 0; i < rows.length; i++) at = setInt4Field(view, at, value(rows[i]));
  return buf;
}
