/**
 * JSON-RPC over HTTP, as chain nodes speak it. Two dialects:
 * - `jsonrpc2`: JSON-RPC 2.0 (geth, Solana, Tron's eth view): batches, notifications (no `id`,
 *   no answer), the standard error codes, HTTP 200 for every answer.
 * - `bitcoin-core`: Bitcoin Core up to v27, which takes `jsonrpc` "1.0", "2.0" or none and always
 *   answers `{result, error, id}`; a single failed call comes with HTTP 500 (404 for an unknown
 *   method, 400 for an invalid request), a batch with HTTP 200.
 * Pure: the caller gives the body text and a method table, and sends what comes back.
 */

export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Thrown by a method handler to answer a JSON-RPC error. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  toObject(): RpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidParams = (message: string): RpcError => new RpcError(RPC_INVALID_PARAMS, message);

export type RpcParams = unknown[] | Record<string, unknown> | undefined;
export type RpcHandler = (params: RpcParams) => unknown;

export type RpcDialect = 'jsonrpc2' | 'bitcoin-core';

/** One chain node as seen over JSON-RPC. */
export interface RpcNode {
  dialect: RpcDialect;
  /** A Map, not an object: a method named `constructor` or `__proto__` must not find anything. */
  methods: ReadonlyMap<string, RpcHandler>;
  /** The message a real node of this kind gives for an unknown method. */
  methodNotFoundMessage(method: string): string;
}

/** What happened to one call, for metrics and logs. */
export interface CallRecord {
  method: string | null;
  outcome: 'ok' | 'rpc_error' | 'invalid' | 'internal_error';
  error?: unknown;
}

export interface RpcReply {
  status: number;
  /** Serialized JSON, or null when nothing is to be sent (only notifications). */
  body: string | null;
  calls: CallRecord[];
}

export interface AnswerOptions {
  /** Largest batch served; a larger one is refused as a whole (geth's default is 1000). */
  maxBatch?: number;
  /** When set, every call fails with this error instead of running (the `error` fault). */
  forcedError?: RpcErrorObject;
}

type Id = string | number | null;

interface Answer {
  /** Undefined for a notification: nothing goes back. */
  response: Record<string, unknown> | undefined;
  /** HTTP status a lone request would get (Bitcoin Core maps error codes to statuses). */
  status: number;
  record: CallRecord;
}

const DEFAULT_MAX_BATCH = 1000;

function isValidId(v: unknown): v is Id {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function coreStatus(code: number): number {
  if (code === RPC_INVALID_REQUEST) return 400;
  if (code === RPC_METHOD_NOT_FOUND) return 404;
  return 500;
}

function errorAnswer(dialect: RpcDialect, id: Id, error: RpcErrorObject, record: CallRecord): Answer {
  if (dialect === 'bitcoin-core') return { response: { result: null, error, id }, status: coreStatus(error.code), record };
  return { response: { jsonrpc: '2.0', id, error }, status: 200, record };
}

function resultAnswer(dialect: RpcDialect, id: Id, result: unknown, method: string): Answer {
  const value = result === undefined ? null : result;
  const response = dialect === 'bitcoin-core' ? { result: value, error: null, id } : { jsonrpc: '2.0', id, result: value };
  return { response, status: 200, record: { method, outcome: 'ok' } };
}

function answerOne(node: RpcNode, request: unknown, opts: AnswerOptions): Answer {
  const dialect = node.dialect;
  if (!isPlainObject(request)) {
    return errorAnswer(dialect, null, { code: RPC_INVALID_REQUEST, message: 'Invalid Request' }, { method: null, outcome: 'invalid' });
  }
  const hasId = Object.prototype.hasOwnProperty.call(request, 'id');
  const id: Id = hasId && isValidId(request.id) ? request.id : null;
  const invalid = (message: string) => errorAnswer(dialect, id, { code: RPC_INVALID_REQUEST, message }, { method: null, outcome: 'invalid' });

  if (dialect === 'jsonrpc2') {
    if (request.jsonrpc !== '2.0') return invalid('Invalid Request: jsonrpc must be "2.0"');
    if (hasId && !isValidId(request.id)) return invalid('Invalid Request: id must be a string, a number or null');
  } else if (request.jsonrpc !== undefined && request.jsonrpc !== '1.0' && request.jsonrpc !== '2.0') {
    return invalid('Invalid Request: unsupported jsonrpc version');
  }
  if (typeof request.method !== 'string') return invalid('Invalid Request: method must be a string');
  const method = request.method;
  const rawParams = request.params;
  // Bitcoin Core treats a null params like an empty list.
  const params = rawParams === null && dialect === 'bitcoin-core' ? [] : rawParams;
  if (params !== undefined && !Array.isArray(params) && !isPlainObject(params)) {
    return invalid('Invalid Request: params must be an array or an object');
  }

  const notification = dialect === 'jsonrpc2' && !hasId;
  const finish = (answer: Answer): Answer => (notification ? { ...answer, response: undefined } : answer);

  const handler = node.methods.get(method);
  if (!handler) {
    return finish(errorAnswer(dialect, id, { code: RPC_METHOD_NOT_FOUND, message: node.methodNotFoundMessage(method) }, { method, outcome: 'rpc_error' }));
  }
  if (opts.forcedError) return finish(errorAnswer(dialect, id, opts.forcedError, { method, outcome: 'rpc_error' }));
  try {
    return finish(resultAnswer(dialect, id, handler(params as RpcParams), method));
  } catch (err) {
    if (err instanceof RpcError) return finish(errorAnswer(dialect, id, err.toObject(), { method, outcome: 'rpc_error' }));
    return finish(errorAnswer(dialect, id, { code: RPC_INTERNAL_ERROR, message: 'Internal error' }, { method, outcome: 'internal_error', error: err }));
  }
}

/** Answers one HTTP body of JSON-RPC: a single call or a batch. Never throws. */
export function answerJsonRpc(node: RpcNode, bodyText: string, opts: AnswerOptions = {}): RpcReply {
  const dialect = node.dialect;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    const a = errorAnswer(dialect, null, { code: RPC_PARSE_ERROR, message: 'Parse error' }, { method: null, outcome: 'invalid' });
    return { status: a.status, body: JSON.stringify(a.response), calls: [a.record] };
  }
  if (!Array.isArray(parsed)) {
    const a = answerOne(node, parsed, opts);
    return { status: a.response === undefined ? 204 : a.status, body: a.response === undefined ? null : JSON.stringify(a.response), calls: [a.record] };
  }
  const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
  if (parsed.length === 0 || parsed.length > maxBatch) {
    const message = parsed.length === 0 ? 'Invalid Request: empty batch' : `Invalid Request: batch of ${parsed.length} calls exceeds the limit of ${maxBatch}`;
    const a = errorAnswer(dialect, null, { code: RPC_INVALID_REQUEST, message }, { method: null, outcome: 'invalid' });
    return { status: dialect === 'bitcoin-core' ? a.status : 200, body: JSON.stringify(a.response), calls: [a.record] };
  }
  const answers = parsed.map((request) => answerOne(node, request, opts));
  const responses = answers.map((a) => a.response).filter((r): r is Record<string, unknown> => r !== undefined);
  const calls = answers.map((a) => a.record);
  if (responses.length === 0) return { status: 204, body: null, calls };
  return { status: 200, body: JSON.stringify(responses), calls };
}
