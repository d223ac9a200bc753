import type { InternalTransaction } from '../types';
import { address, isObject, quantity } from './hex';

type Json = any;

/** What one transaction's trace says: its top-level call and the value moved below it. */
export interface TraceSummary {
  /** Lowercased top-level type (`call`, `create`, `create2`…); null when the trace has no top frame. */
  kind: string | null;
  from: string | null;
  /** Callee, or the created contract for a top-level create. */
  to: string | null;
  value: bigint | null;
  /** The top-level frame failed: the whole transaction reverted. */
  failed: boolean;
  internals: InternalTransaction[];
}

// Only these move the value they carry. DELEGATECALL frames report the parent's value (geth) but
// move nothing; STATICCALL cannot carry value.
const VALUE_MOVING = new Set(['call', 'callcode', 'create', 'create2', 'selfdestruct']);

function hasError(frame: Json): boolean {
  const e = frame.error;
  return e !== undefined && e !== null && e !== '' && e !== false;
}

function internal(
  kind: string,
  from: string | null,
  to: string | null,
  value: bigint,
  index: number,
  depth: number,
): InternalTransaction {
  return {
    from_address: from,
    // CALLCODE runs the callee's code in the caller's account: the value never leaves the caller.
    // Geth reports the code address as `to`, Parity the caller; both are normalized to the caller.
    to_address: kind === 'callcode' ? from : to,
    amount: value.toString(),
    tx_status: 'success',
    program_id: null,
    instruction: kind,
    description: null,
    instr_index: index,
    depth,
  };
}

/**
 * A geth callTracer frame tree. Frames are numbered in depth-first pre-order (top frame = 0), the
 * same order Parity lists a transaction's traces in, so `instr_index` agrees between formats.
 * A frame with `error` reverted, and so did everything below it.
 */
export function summarizeCallFrame(top: Json): TraceSummary {
  const summary: TraceSummary = {
    kind: typeof top.type === 'string' ? top.type.toLowerCase() : null,
    from: address(top.from),
    to: address(top.to),
    value: quantity(top.value),
    failed: hasError(top),
    internals: [],
  };
  const stack: Array<{ frame: Json; depth: number; reverted: boolean }> = [];
  pushChildren(stack, top, 1, summary.failed);
  let index = 0;
  while (stack.length > 0) {
    const { frame, depth, reverted } = stack.pop()!;
    index += 1;
    if (!isObject(frame)) continue;
    const frameReverted = reverted || hasError(frame);
    pushChildren(stack, frame, depth + 1, frameReverted);
    if (frameReverted) continue;
    const kind = typeof frame.type === 'string' ? frame.type.toLowerCase() : '';
    const value = quantity(frame.value);
    // Old geth SELFDESTRUCT frames carry no from/to/value: the amount is unknown, so no transfer.
    if (!VALUE_MOVING.has(kind) || value === null || value === 0n) continue;
    summary.internals.push(internal(kind, address(frame.from), address(frame.to), value, index, depth));
  }
  return summary;
}

function pushChildren(stack: Array<{ frame: Json; depth: number; reverted: boolean }>, frame: Json, depth: number, reverted: boolean): void {
  const calls = frame.calls;
  if (!Array.isArray(calls)) return;
  for (let i = calls.length - 1; i >= 0; i--) stack.push({ frame: calls[i], depth, reverted });
}

function traceAddressOf(t: Json): number[] | null {
  const ta = t.traceAddress;
  if (!Array.isArray(ta)) return null;
  for (const n of ta) if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return null;
  return ta as number[];
}

/**
 * One transaction's Parity/OpenEthereum `trace_block` entries (already grouped by transaction
 * hash, in the node's order, which is depth-first pre-order). Depth is the `traceAddress` length;
 * an entry with `error` reverts itself and every entry whose `traceAddress` extends it.
 */
export function summarizeParityTraces(traces: Json[]): TraceSummary {
  const summary: TraceSummary = { kind: null, from: null, to: null, value: null, failed: false, internals: [] };
  const failedPaths = new Set<string>();
  for (const t of traces) {
    const ta = isObject(t) ? traceAddressOf(t) : null;
    if (ta && hasError(t)) failedPaths.add(ta.join(','));
  }
  for (let index = 0; index < traces.length; index++) {
    const t = traces[index];
    if (!isObject(t)) continue;
    const ta = traceAddressOf(t);
    const action: Json = t.action;
    if (ta === null || !isObject(action)) continue;
    const decoded = decodeParity(t, action);
    if (ta.length === 0) {
      summary.kind = decoded.kind;
      summary.from = decoded.from;
      summary.to = decoded.to;
      summary.value = decoded.value;
      summary.failed = hasError(t);
      continue;
    }
    if (isRevertedPath(ta, failedPaths)) continue;
    const { kind, from, to, value } = decoded;
    if (kind === null || !VALUE_MOVING.has(kind) || value === null || value === 0n) continue;
    summary.internals.push(internal(kind, from, to, value, index, ta.length));
  }
  return summary;
}

function isRevertedPath(ta: number[], failedPaths: Set<string>): boolean {
  if (failedPaths.size === 0) return false;
  for (let len = 0; len <= ta.length; len++) {
    if (failedPaths.has(ta.slice(0, len).join(','))) return true;
  }
  return false;
}

function decodeParity(
  t: Json,
  action: Json,
): { kind: string | null; from: string | null; to: string | null; value: bigint | null } {
  const type = typeof t.type === 'string' ? t.type.toLowerCase() : '';
  if (type === 'call') {
    const kind = typeof action.callType === 'string' ? action.callType.toLowerCase() : 'call';
    return { kind, from: address(action.from), to: address(action.to), value: quantity(action.value) };
  }
  if (type === 'create') {
    // Erigon/Nethermind name the opcode in `creationMethod`; OpenEthereum only knew `create`.
    const method = typeof action.creationMethod === 'string' ? action.creationMethod.toLowerCase() : 'create';
    const result: Json = t.result;
    const created = isObject(result) ? address(result.address) : null;
    return { kind: method === 'create2' ? 'create2' : 'create', from: address(action.from), to: created, value: quantity(action.value) };
  }
  if (type === 'suicide' || type === 'selfdestruct') {
    return {
      kind: 'selfdestruct',
      from: address(action.address),
      to: address(action.refundAddress),
      value: quantity(action.balance),
    };
  }
  return { kind: type || null, from: null, to: null, value: null };
}
