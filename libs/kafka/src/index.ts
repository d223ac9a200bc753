// First: they replace modules of kafkajs before kafkajs loads (linear-grouping.ts, produce-request.ts).
export * from './linear-grouping';
export * from './produce-request';
export * from './config';
export * from './client';
export * from './crc32c';
export * from './record-encoder';
export * from './kafkajs-replacements';
export * from './producer';
export * from './partitioner';
export * from './batch-plan';
export * from './handler';
export * from './consumer';
export * from './offsets';
export * from './service';
export * from './broker-link';
export * from './handler-retry';
