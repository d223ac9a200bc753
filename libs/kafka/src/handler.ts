import type { ErrorCode } from '@chainpipe/runtime';

/*
 * What a consumer hands its handler and what the handler answers: shared by the consumer and
 * its retry, below both.
 */

export interface ConsumedRecord<T> {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: T;
  headers: Record<string, string>;
  /** Broker timestamp, Unix milliseconds as a string (kafkajs' form). */
  timestamp: string;
}

export interface DeadLetter {
  record: ConsumedRecord<unknown>;
  reason: string;
  code?: ErrorCode;
}

export interface HandlerResult {
  /** Records the handler judged unprocessable; they go to the DLQ and the batch still commits. */
  deadLetters?: DeadLetter[];
}

export interface HandlerContext {
  heartbeat(): Promise<void>;
  /** Aborted when the consumer stops: long waits inside a handler should honour it. */
  signal: AbortSignal;
}

/**
 * Processes records in order. Resolve only when the work and every produce it made are durable:
 * offsets are committed right after. Throw a NonRetryableError for input that can never succeed
 * (the records are then retried one by one and the failing ones dead-lettered); anything else is
 * retried with backoff, and past the retry budget the consumer stops the app.
 */
export type BatchHandler<T> = (records: ConsumedRecord<T>[], ctx: HandlerContext) => Promise<HandlerResult | void>;
