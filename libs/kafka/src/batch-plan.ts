import type { Message } from 'kafkajs';

/**
 * How the producer cuts publishes into requests, as pure functions over byte counts.
 *
 * The broker checks each partition's record batch of a request against the topic's
 * `max.message.bytes` (TopicSpec.maxMessageBytes). The producer does not know which partition a
 * key lands on before kafkajs assigns it, so it keeps the bytes of all of a topic's messages in
 * one request within the limit: then no partition's batch can exceed it, whatever the spread.
 */

/** Header of one record batch (magic v2: base offset … record count). */
export const RECORD_BATCH_OVERHEAD = 61;

/**
 * Upper bound of one record's framing besides its key, value and header bytes (length,
 * attributes, timestamp and offset deltas, key/value/header length varints): kept generous.
 */
export const RECORD_OVERHEAD = 70;

/** Bytes one message adds to its partition's record batch (uncompressed; we send CompressionTypes.None). */
export function recordBytes(m: Pick<Message, 'key' | 'value' | 'headers'>): number {
  const v = m.value;
  let n = v == null ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : v.length;
  if (m.key) n += typeof m.key === 'string' ? Buffer.byteLength(m.key) : m.key.length;
  for (const [k, hv] of Object.entries(m.headers ?? {})) {
    n += Buffer.byteLength(k);
    for (const one of Array.isArray(hv) ? hv : [hv]) n += typeof one === 'string' ? Buffer.byteLength(one) : Buffer.isBuffer(one) ? one.length : 0;
  }
  return n + RECORD_OVERHEAD;
}

/** Record bytes a topic's messages may add up to in one request: its limit less the batch header. */
export function topicBudget(maxMessageBytes: number): number {
  return maxMessageBytes - RECORD_BATCH_OVERHEAD;
}

/**
 * Cuts one publish call's messages (by their record sizes) into parts of at most `budget` bytes
 * and `maxMessages` messages, in order. A message that alone exceeds the budget can never be
 * accepted by the topic: its index goes to `tooLarge` and it is in no part.
 */
export function splitIntoParts(sizes: readonly number[], budget: number, maxMessages: number): { parts: number[][]; tooLarge: number[] } {
  const parts: number[][] = [];
  const tooLarge: number[] = [];
  let current: number[] = [];
  let bytes = 0;
  sizes.forEach((size, i) => {
    if (size > budget) {
      tooLarge.push(i);
      return;
    }
    if (current.length && (bytes + size > budget || current.length >= maxMessages)) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(i);
    bytes += size;
  });
  if (current.length) parts.push(current);
  return { parts, tooLarge };
}

/** What the next request holds so far: bytes per physical topic and messages in all. */
export interface QueuedRequest {
  readonly bytesByTopic: ReadonlyMap<string, number>;
  readonly messages: number;
}

/** A part waiting to join the next request (at most one topic's budget, from splitIntoParts). */
export interface QueuedPart {
  readonly topic: string;
  readonly bytes: number;
  readonly messages: number;
  /** The topic's budget (topicBudget of its limit). */
  readonly budget: number;
}

/** Whether `part` must go in a new request: added to what is queued, its topic would pass its budget. */
export function needsNewRequest(queued: QueuedRequest, part: QueuedPart, maxMessages: number): boolean {
  if (queued.messages === 0) return false;
  return (queued.bytesByTopic.get(part.topic) ?? 0) + part.bytes > part.budget || queued.messages + part.messages > maxMessages;
}

/** Whether the request is full once `part` joined it: send it now rather than after the linger. */
export function requestFull(queued: QueuedRequest, part: QueuedPart, maxMessages: number): boolean {
  return (queued.bytesByTopic.get(part.topic) ?? 0) >= part.budget || queued.messages >= maxMessages;
}

/** Why an app may not publish to a topic, or null when it may. An app-less producer (tests, tools) may publish anywhere. */
export function ownershipProblem(app: string | undefined, spec: { name: string; producers: readonly string[] }): string | null {
  if (app === undefined || spec.producers.includes(app)) return null;
  return `${app} does not produce ${spec.name} (its producers: ${spec.producers.join(', ')}); add it to the topic registry if it should`;
}
