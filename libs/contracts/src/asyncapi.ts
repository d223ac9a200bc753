import { SchemaBundle } from './bundle';
import type { Contracts, JsonSchema } from './schemas';
import { TOPICS, type TopicSpec } from './topics';

/**
 * One channel of the asynchronous API: a Kafka topic of the registry, and (as they land) a
 * WebSocket, the SSE stream or the webhook callback. Adding a channel is adding one of these.
 */
export interface AsyncChannel {
  /** Key of the channel in the document (`chainTx`). */
  key: string;
  /** Topic name or path (`chain.tx.v1`, `/tx/api/v1/transaction/ws`). */
  address: string;
  description: string;
  /** `send`: the system emits it (a topic, a push, a callback); `receive`: the system takes it in. */
  action: 'send' | 'receive';
  /** Each message goes the channel's way unless it says otherwise (a WebSocket carries both). */
  messages: { name: string; summary?: string; payload?: string | JsonSchema; headers?: string; key?: string; contentType?: string; action?: 'send' | 'receive' }[];
}

export interface AsyncApiInfo {
  title: string;
  version: string;
  description: string;
}

const PIPELINE_INFO: AsyncApiInfo = {
  title: 'chainpipe event pipeline',
  version: '1.0.0',
  description: 'Kafka topics of the pipeline (message values validated against these schemas by every producer and consumer).',
};

/** The registry's topics as channels: json topics carry their schema, raw topics their header schema. */
export function topicChannels(topics: readonly TopicSpec[] = Object.values(TOPICS)): AsyncChannel[] {
  const entries = Object.entries(TOPICS) as [string, TopicSpec][];
  return topics.map((spec) => ({
    key: entries.find(([, t]) => t === spec)?.[0] ?? spec.name,
    address: spec.name,
    description: `Kafka topic ${spec.name}: keyed by ${spec.keyDoc}, ${spec.partitions} partition(s); produced by ${spec.producers.join(', ')}. Dead letters go to ${spec.name}.dlq.`,
    action: 'send',
    messages: [
      spec.encoding === 'json'
        ? { name: `${spec.name}`, payload: spec.schema, key: spec.keyDoc, contentType: 'application/json' }
        : { name: `${spec.name}`, payload: { description: 'the bytes exactly as received' }, headers: spec.schema, key: spec.keyDoc, contentType: 'application/octet-stream' },
    ],
  }));
}

/**
 * The AsyncAPI 3.0 document of the pipeline's channels, with the message schemas of `schemas/`
 * bundled into `components.schemas` (the same bundler as the OpenAPI documents and the types).
 */
export function asyncApiDocument(contracts: Pick<Contracts, 'schema'>, channels: readonly AsyncChannel[] = topicChannels(), info: AsyncApiInfo = PIPELINE_INFO) {
  const bundle = new SchemaBundle(contracts, { name: (id) => id.replace(/\//g, '.'), prefix: '#/components/schemas/' });
  const docChannels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const channel of channels) {
    const refs: Record<string, { $ref: string }> = {};
    const byAction: Record<'send' | 'receive', string[]> = { send: [], receive: [] };
    for (const m of channel.messages) {
      const id = m.name.replace(/[^A-Za-z0-9._-]/g, '_');
      messages[id] = {
        name: m.name,
        ...(m.summary ? { summary: m.summary } : {}),
        ...(m.contentType ? { contentType: m.contentType } : {}),
        ...(m.payload !== undefined ? { payload: bundle.use(m.payload) } : {}),
        ...(m.headers ? { headers: bundle.ref(m.headers) } : {}),
        ...(m.key ? { bindings: { kafka: { key: { type: 'string', description: m.key }, bindingVersion: '0.5.0' } } } : {}),
      };
      refs[id] = { $ref: `#/components/messages/${id}` };
      byAction[m.action ?? channel.action].push(id);
    }
    docChannels[channel.key] = { address: channel.address, description: channel.description, messages: refs };
    for (const action of ['send', 'receive'] as const) {
      if (!byAction[action].length) continue;
      operations[`${channel.key}.${action}`] = {
        action,
        channel: { $ref: `#/channels/${channel.key}` },
        messages: byAction[action].map((id) => ({ $ref: `#/channels/${channel.key}/messages/${id}` })),
      };
    }
  }
  return {
    asyncapi: '3.0.0',
    info,
    defaultContentType: 'application/json',
    channels: docChannels,
    operations,
    components: { messages, schemas: bundle.schemas },
  };
}
