import type { Knex } from 'knex';
import { setFloat8Field, setInt4Field, setInt8Field } from './binary-arrays';

/**
 * `COPY … FROM STDIN` over a `pg` connection, without pg-copy-streams: a query object that pg
 * accepts as a "submittable" (it calls `submit`, then hands over the server's CopyInResponse,
 * CommandComplete, ErrorResponse and ReadyForQuery). The data goes out as CopyData messages,
 * one a chunk.
 */
interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

class CopyFromQuery {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: Error) => void;
  private rows = 0;
  private failed = false;

  constructor(
    private readonly text: string,
    private readonly chunks: readonly Buffer[],
  ) {
    this.done = new Promise<number>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: CopyConnection): void {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: CopyConnection): void {
    for (const c of this.chunks) connection.sendCopyFromChunk(c);
    connection.endCopyFrom();
  }

  handleCommandComplete(msg: { text?: string }): void {
    const m = /^COPY (\d+)/.exec(msg.text ?? '');
    if (m) this.rows = Number(m[1]);
  }

  // The connection is free again only at ReadyForQuery, also after an error: the promise
  // settles then, so that the caller's next statement (a rollback) finds it idle.
  handleReadyForQuery(): void {
    if (!this.failed) this.resolve(this.rows);
  }

  handleError(err: Error): void {
    this.failed = true;
    this.reject(err);
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}

/** A `pg` connection, as far as a copy uses it. */
export interface CopyTarget {
  query(q: unknown): unknown;
}

/** Copy data travels in CopyData messages of at most this many bytes. */
const CHUNK_BYTES = 1024 * 1024;

/** Runs `sql` (a `COPY … FROM STDIN …`) on `connection` with `data`; resolves with the rows copied. */
export async function copyFromStdin(connection: CopyTarget, sql: string, data: Buffer): Promise<number> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < data.length; i += CHUNK_BYTES) chunks.push(data.subarray(i, i + CHUNK_BYTES));
  const q = new CopyFromQuery(sql, chunks);
  void connection.query(q);
  return q.done;
}

/** The part of knex's client that lends a connection: a transaction's client lends its own. */
interface ConnectionLender {
  acquireConnection(): Promise<CopyTarget>;
}

/** Runs a `COPY … FROM STDIN` inside a knex transaction, on its connection. */
export async function copyInTransaction(trx: Knex.Transaction, sql: string, data: Buffer): Promise<number> {
  const connection = await (trx.client as unknown as ConnectionLender).acquireConnection();
  return copyFromStdin(connection, sql, data);
}

/** The signature and header of PostgreSQL's binary copy format: no OIDs, no header extension. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Rows in PostgreSQL's binary copy format (`COPY … FROM STDIN (FORMAT binary)`): a row is its
 * field count, then each field as its byte length (-1: NULL) and its big-endian bytes, in the
 * table's column order as the COPY names them; the server reads each field with its column
 * type's binary input, so a field must be written as that type (int4, int8, float8, text).
 * Numbers are written by the binary array parameters' field writers (binary-arrays.ts).
 */
export class BinaryCopyWriter {
  private buf: Buffer;
  private view: DataView;
  private at: number;

  constructor(expectedBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(expectedBytes, SIGNATURE.length + 10));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    SIGNATURE.copy(this.buf, 0);
    this.view.setInt32(SIGNATURE.length, 0);
    this.view.setInt32(SIGNATURE.length + 4, 0);
    this.at = SIGNATURE.length + 8;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + bytes));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  /** Begins a row of `fields` fields, with room for `bytes` more bytes (its numbers' lengths and values; a text makes its own). */
  row(fields: number, bytes: number): this {
    this.room(2 + bytes);
    this.view.setInt16(this.at, fields);
    this.at += 2;
    return this;
  }

  int4(v: number): this {
    this.at = setInt4Field(this.view, this.at, v);
    return this;
  }

  /** A bigint of a safe integer (JavaScript numbers hold no others exactly). */
  int8(v: number): this {
    this.at = setInt8Field(this.view, this.at, v);
    return this;
  }

  /** A float8; null is NULL. */
  float8(v: number | null): this {
    this.at = setFloat8Field(this.view, this.at, v);
    return this;
  }

  /** A text (or varchar) field. */
  text(v: string): this {
    this.room(4 + Buffer.byteLength(v));
    const n = this.buf.write(v, this.at + 4, 'utf8');
    this.view.setInt32(this.at, n);
    this.at += 4 + n;
    return this;
  }

  /** The copy data: the rows written, and the trailer. */
  finish(): Buffer {
    this.room(2);
    this.view.setInt16(this.at, -1);
    this.at += 2;
    return this.buf.subarray(0, this.at);
  }
}
