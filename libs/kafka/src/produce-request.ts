import { KAFKAJS_MODULES, encoderOf, replaceKafkajsModule, type EncoderLike } from './kafkajs-modules';

/*
 * A produce request written into one buffer of its exact size, and every request framed with
 * one copy of its payload. kafkajs builds a produce request as encoders nested four deep (record
 * batch, partition, topic, request, then the framing's two), each a new zero-filled buffer grown
 * by doubling that copies the one inside it: a request's bytes were copied five times and about
 * twice as many zeroed. At 10,000 pools the aggregator publishes a few megabytes a call, so that
 * was its largest memory traffic after the candles themselves, and the megabytes of buffers it
 * allocated a call made V8 collect the young generation early ("external memory pressure").
 *
 * Both are drop-ins for kafkajs modules with the same contracts (kafkajs-modules.ts), each held
 * to kafkajs' own bytes by a unit test: `protocol/request.js` (the framing: size, API key and
 * version, correlation id, client id, then the request's payload), which kafkajs loads with
 * itself, so it is replaced by the first module of this package; and
 * `protocol/requests/produce/v3/request.js` (Produce v3, which v4 to v7 reuse), loaded on the
 * first produce, replaced with the record encoders (useExactRecords).
 */

const FRAMING_MODULE = 'kafkajs/src/protocol/request.js';
const PRODUCE_V3_MODULE = 'kafkajs/src/protocol/requests/produce/v3/request.js';
const COMPRESSION_MODULE = 'kafkajs/src/protocol/message/compression/index.js';
const PRODUCE_API_KEY = 0;

/** Bytes of a kafkajs nullable string (int16 length, -1 for null, then UTF-8). */
const stringSize = (s: string | null | undefined): number => 2 + (s == null ? 0 : Buffer.byteLength(s, 'utf8'));

function writeString(buf: Buffer, at: number, s: string | null | undefined): number {
  if (s == null) return buf.writeInt16BE(-1, at);
  const length = buf.write(s, at + 2, 'utf8');
  buf.writeInt16BE(length, at);
  return at + 2 + length;
}

interface RequestToFrame {
  correlationId: number;
  clientId: string | null;
  request: { apiKey: number; apiVersion: number; encode: () => Promise<{ buffer: Buffer }> | { buffer: Buffer } };
}

/**
 * kafkajs' `protocol/request.js`: a request's bytes on the wire, its size first, then API key,
 * API version, correlation id and client id, then its payload, copied once.
 */
export async function frameRequest({ correlationId, clientId, request: { apiKey, apiVersion, encode } }: RequestToFrame): Promise<EncoderLike> {
  const payload = (await encode()).buffer;
  const size = 2 + 2 + 4 + stringSize(clientId) + payload.length;
  const buf = Buffer.allocUnsafe(4 + size);
  buf.writeInt32BE(size, 0);
  buf.writeInt16BE(apiKey, 4);
  buf.writeInt16BE(apiVersion, 6);
  buf.writeInt32BE(correlationId, 8);
  const at = writeString(buf, 12, clientId);
  payload.copy(buf, at);
  return encoderOf(buf);
}

/**
 * True when kafkajs frames its requests with frameRequest: this package loads this module right
 * after linear-grouping.ts, before kafkajs, which requires its framing as it loads. A process
 * that loaded kafkajs first keeps kafkajs' own (more copies, the same bytes).
 */
export const requestFramingInstalled: boolean = replaceKafkajsModule(FRAMING_MODULE, frameRequest);

interface ProduceMessage {
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: Record<string, unknown>;
  timestamp?: number | string | null;
}

interface ProduceArgs {
  acks: number;
  timeout: number;
  transactionalId?: string | null;
  producerId?: unknown;
  producerEpoch?: number;
  compression?: number;
  topicData: { topic: string; partitions: { partition: number; messages: ProduceMessage[]; firstSequence?: number }[] }[];
}

type RecordEncoder = (fields: object) => unknown;
type BatchEncoder = (fields: object) => Promise<{ buffer: Buffer }>;

/**
 * kafkajs' Produce v3 request: the same fields, record batches made by the same modules (the
 * record and batch encoders in the require cache, record-encoder.ts's once installed), written
 * into one buffer of the request's exact size, each batch copied once.
 */
export function exactProduceRequest({ acks, timeout, transactionalId = null, producerId, producerEpoch = 0, compression, topicData }: ProduceArgs) {
  return {
    apiKey: PRODUCE_API_KEY,
    apiVersion: 3,
    apiName: 'Produce',
    expectResponse: () => acks !== 0,
    encode: async (): Promise<EncoderLike> => {
      /* eslint-disable @typescript-eslint/no-require-imports -- kafkajs' internal modules, untyped; the encoders from the cache (ours once installed) */
      const Record = require(KAFKAJS_MODULES.record) as RecordEncoder;
      const { RecordBatch } = require(KAFKAJS_MODULES.recordBatch) as { RecordBatch: BatchEncoder };
      const noCompression = (require(COMPRESSION_MODULE) as { Types: { None: number } }).Types.None;
      const Long = require(KAFKAJS_MODULES.long) as { fromInt(v: number): unknown };
      /* eslint-enable @typescript-eslint/no-require-imports */
      const batchesByTopic: Buffer[][] = [];
      let size = stringSize(transactionalId) + 2 + 4 + 4;
      for (const { topic, partitions } of topicData) {
        const batches: Buffer[] = [];
        size += stringSize(topic) + 4;
        for (const { messages, firstSequence } of partitions) {
          // As kafkajs: the batch's first and largest timestamps are those of the messages that
          // have one, in the order of a default sort (by their text), or now when none has.
          const dateNow = Date.now();
          const stamps = messages
            .map((m) => m.timestamp)
            .filter((t) => t != null)
            .sort();
          const firstTimestamp = (stamps.length ? stamps[0] : dateNow) as number;
          const maxTimestamp = stamps.length ? stamps[stamps.length - 1] : dateNow;
          // A timestamp may be text: `-` takes it as a number, as kafkajs' does.
          const records = messages.map((m, i) => Record({ ...m, offsetDelta: i, timestampDelta: ((m.timestamp || dateNow) as number) - firstTimestamp }));
          const batch = (
            await RecordBatch({
              compression: compression === undefined ? noCompression : compression,
              records,
              firstTimestamp,
              maxTimestamp,
              producerId: producerId === undefined ? Long.fromInt(-1) : producerId,
              producerEpoch,
              firstSequence,
              transactional: !!transactionalId,
              lastOffsetDelta: records.length - 1,
            })
          ).buffer;
          batches.push(batch);
          size += 4 + 4 + batch.length;
        }
        batchesByTopic.push(batches);
      }
      const buf = Buffer.allocUnsafe(size);
      let at = writeString(buf, 0, transactionalId);
      at = buf.writeInt16BE(acks, at);
      at = buf.writeInt32BE(timeout, at);
      at = buf.writeInt32BE(topicData.length, at);
      topicData.forEach(({ topic, partitions }, t) => {
        at = writeString(buf, at, topic);
        at = buf.writeInt32BE(partitions.length, at);
        partitions.forEach(({ partition }, p) => {
          const batch = batchesByTopic[t][p];
          at = buf.writeInt32BE(partition, at);
          at = buf.writeInt32BE(batch.length, at);
          at += batch.copy(buf, at);
        });
      });
      return encoderOf(buf);
    },
  };
}

/** Makes kafkajs build its produce requests with exactProduceRequest from its first produce on (see useExactRecords). */
export function useExactProduceRequests(): boolean {
  return replaceKafkajsModule(PRODUCE_V3_MODULE, exactProduceRequest);
}
