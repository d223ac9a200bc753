import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { TOPICS, loadContracts, type AddressChangeMessage, type TopicSpec } from '@chainpipe/contracts';
import {
  RECORD_BATCH_OVERHEAD,
  RECORD_OVERHEAD,
  TopicProducer,
  needsNewRequest,
  ownershipProblem,
  recordBytes,
  requestFull,
  splitIntoParts,
  topicBudget,
  topicDefinitions,
} from '@chainpipe/kafka';
import { NonRetryableError, createLogger } from '@chainpipe/runtime';

describe('producer batching plan', () => {
  it('sizes a record by its key, value and headers plus the record framing', () => {
    expect(recordBytes({ key: 'ab', value: 'héllo' })).to.equal(2 + 6 + RECORD_OVERHEAD);
    expect(recordBytes({ key: null, value: Buffer.alloc(10), headers: { h: 'xy', n: Buffer.from('abc') } })).to.equal(10 + 1 + 2 + 1 + 3 + RECORD_OVERHEAD);
    expect(topicBudget(4_194_304)).to.equal(4_194_304 - RECORD_BATCH_OVERHEAD);
  });

  it('cuts one publish into parts within the budget and the message count, in order, setting aside what can never fit', () => {
    const { parts, tooLarge } = splitIntoParts([40, 40, 40, 500, 10, 10, 10, 10], 100, 3);
    expect(parts).to.deep.equal([[0, 1], [2, 4, 5], [6, 7]]);
    expect(tooLarge).to.deep.equal([3]);
    expect(splitIntoParts([100, 1], 100, 10)).to.deep.equal({ parts: [[0], [1]], tooLarge: [] });
    expect(splitIntoParts([], 1, 1)).to.deep.equal({ parts: [], tooLarge: [] });
  });

  it('starts a new request when a part would take its topic past its budget, whatever other topics hold', () => {
    const queued = { bytesByTopic: new Map([['a', 60], ['b', 90]]), messages: 5 };
    expect(needsNewRequest(queued, { topic: 'a', bytes: 40, messages: 1, budget: 100 }, 1000)).to.equal(false);
    expect(needsNewRequest(queued, { topic: 'a', bytes: 41, messages: 1, budget: 100 }, 1000)).to.equal(true);
    expect(needsNewRequest(queued, { topic: 'c', bytes: 100, messages: 1, budget: 100 }, 1000)).to.equal(false);
    expect(needsNewRequest(queued, { topic: 'c', bytes: 1, messages: 6, budget: 100 }, 10)).to.equal(true);
    expect(needsNewRequest({ bytesByTopic: new Map(), messages: 0 }, { topic: 'a', bytes: 100, messages: 10, budget: 100 }, 10)).to.equal(false);
    expect(requestFull({ bytesByTopic: new Map([['a', 100]]), messages: 1 }, { topic: 'a', bytes: 1, messages: 1, budget: 100 }, 10)).to.equal(true);
    expect(requestFull({ bytesByTopic: new Map([['a', 99]]), messages: 9 }, { topic: 'a', bytes: 1, messages: 1, budget: 100 }, 10)).to.equal(false);
  });

  it('lets an app publish only the topics that name it; an app-less producer publishes anywhere', () => {
    expect(ownershipProblem('chain-parser', TOPICS.chainTx)).to.equal(null);
    expect(ownershipProblem('pending-compensator', TOPICS.chainFetched)).to.equal(null);
    expect(ownershipProblem(undefined, TOPICS.chainTx)).to.equal(null);
    expect(ownershipProblem('pending-compensator', TOPICS.chainTx)).to.match(/pending-compensator does not produce chain\.tx\.v1/);
    expect(ownershipProblem('tx-matcher', TOPICS.chainTx)).to.match(/tx-matcher does not produce chain\.tx\.v1/);
  });
});

describe('topic registry, executed', () => {
  it('computes every key from the message', () => {
    const tx = { chain_type: 'ethereum', chain_id: 1, tx_hash: '0xab' };
    expect(TOPICS.chainTx.key({ value: { id: '1', network: 'ethereum-mainnet', is_reorg_resend: false, tx } as never })).to.equal('ethereum:1:0xab');
    expect(TOPICS.chainRaw.key({ value: Buffer.alloc(0), headers: { network: 'bitcoin-mainnet' } })).to.equal('bitcoin-mainnet');
    expect(TOPICS.addressesChanges.key({ value: { app_id: 'app-9' } as AddressChangeMessage })).to.equal('app-9');
    expect(TOPICS.klinePools.key({ value: { pool_id: null } as never })).to.equal('ensure');
    expect(TOPICS.klinePools.key({ value: { pool_id: 12 } as never })).to.equal('12');
    expect(TOPICS.marketTicks.key({ value: { chain_type: 'evm', chain_id: 1, pool_address: '0xAB', token: 'base' } as never })).to.equal('evm:1:0xab:base');
    expect(TOPICS.priceQuotes.key({ value: { kind: 'fiat', base: 'USD' } as never })).to.equal('fiat:USD');
  });

  it('creates each topic and its dead letters with max.message.bytes from the spec, and refuses a second number in configs', () => {
    for (const spec of Object.values(TOPICS) as TopicSpec[]) {
      const [main, dlq] = topicDefinitions([spec]);
      expect(main.configs['max.message.bytes'], spec.name).to.equal(String(spec.maxMessageBytes));
      expect(dlq.configs['max.message.bytes'], spec.name).to.equal(String(spec.maxMessageBytes));
    }
    const twice = { ...TOPICS.chainTx, configs: { 'max.message.bytes': '1' } } as TopicSpec;
    expect(() => topicDefinitions([twice])).to.throw(/comes from maxMessageBytes/);
  });
});

describe('TopicProducer refusals (before any request)', () => {
  // Never connected: every refusal here happens before a request would be queued.
  const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
  const producer = (app?: string) => new TopicProducer({ kafka, contracts: loadContracts(), logger: createLogger({ name: 'batch-plan-test', level: 'silent' }), registry: new Registry(), app });
  const change = (adds: string[]): AddressChangeMessage => ({ app_id: 'app-1', chain_type: 'ethereum', adds, removes: [], changed_at: 1 });
  const rejection = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err as NonRetryableError);

  it('refuses a topic the app does not produce, with PRODUCE_NOT_OWNER', async () => {
    const err = await rejection(producer('tx-matcher').publish(TOPICS.addressesChanges, [{ value: change(['0x1']) }]));
    expect(err).to.be.instanceOf(NonRetryableError);
    expect(err!.code).to.equal('PRODUCE_NOT_OWNER');
  });

  // chain.raw.v1 takes 18 MiB; a delivery of 19 MiB passes its (header) schema but not the limit.
  const headers = { network: 'ethereum-mainnet', received_at: '1700000000000', content_encoding: 'identity', ingest_route: 'stream' };
  const huge = { value: Buffer.alloc(19 * 1024 * 1024), headers };

  it('refuses a call holding a message alone above the topic limit, with PRODUCE_TOO_LARGE', async () => {
    const err = await rejection(producer('chain-ingest').publish(TOPICS.chainRaw, [{ value: Buffer.from('{}'), headers }, huge]));
    expect(err).to.be.instanceOf(NonRetryableError);
    expect(err!.code).to.equal('PRODUCE_TOO_LARGE');
    expect(err!.message).to.match(/1 message\(s\) above the topic's limit of 18874368 bytes \(first: key ethereum-mainnet, 19923\d{3} bytes\)/);
  });

  it('returns the too-large messages instead when asked, sending nothing when nothing else is left', async () => {
    const left = await producer().publishSkippingTooLarge(TOPICS.chainRaw, [huge]);
    expect(left).to.have.length(1);
    expect(left[0].message).to.equal(huge);
    expect(left[0].key).to.equal('ethereum-mainnet');
    expect(left[0].limit).to.equal(18_874_368);
    expect(left[0].bytes).to.be.greaterThan(19 * 1024 * 1024);
  });
});

describe('one check of a stored record per message', () => {
  const contracts = loadContracts();
  const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
  const producer = new TopicProducer({ kafka, contracts, logger: createLogger({ name: 'batch-plan-test', level: 'silent' }), registry: new Registry() });
  // A tx object that breaks common/normalized-tx (nearly every required field is missing).
  const message = (over: Record<string, unknown> = {}) => ({ value: { id: '12', network: 'ethereum-mainnet', is_reorg_resend: false, tx: { chain_type: 'ethereum', chain_id: 1, tx_hash: '0xab' }, ...over } as never });

  it('chain.tx.v1 names its stored record, and the envelope validator derived from the schema skips only that record', () => {
    expect(TOPICS.chainTx.storedRecord).to.equal('tx');
    const envelope = contracts.envelopeValidator('kafka/chain.tx.v1', 'tx');
    expect(envelope(message().value)).to.equal(true);
    expect(contracts.validator('kafka/chain.tx.v1')(message().value)).to.equal(false);
    expect(envelope(message({ id: 'x' }).value)).to.equal(false);
    expect(envelope(message({ extra: 1 }).value)).to.equal(false);
    expect(envelope(message({ tx: 'not an object' }).value)).to.equal(false);
    expect(contracts.envelopeValidator('kafka/chain.tx.v1', 'tx')).to.equal(envelope);
    expect(() => contracts.envelopeValidator('kafka/chain.tx.v1', 'nope')).to.throw(/no property nope/);
  });

  it('the producer checks the envelope when the caller states the record was checked, the whole message otherwise', () => {
    expect(producer.encode(TOPICS.chainTx, message(), { recordChecked: true }).key).to.equal('ethereum:1:0xab');
    expect(() => producer.encode(TOPICS.chainTx, message())).to.throw(NonRetryableError, /chain\.tx\.v1: .*is required/);
    expect(() => producer.encode(TOPICS.chainTx, message({ id: 'x' }), { recordChecked: true })).to.throw(NonRetryableError, /id must match pattern/);
    // A topic without a stored record: the option changes nothing.
    const change = { value: { app_id: 'a', chain_type: 'ethereum', adds: 'no', removes: [], changed_at: 1 } as never };
    expect(() => producer.encode(TOPICS.addressesChanges, change, { recordChecked: true })).to.throw(NonRetryableError, /adds must be array/);
  });
});

describe("a message's JSON written by its caller", () => {
  const contracts = loadContracts();
  const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
  const producer = new TopicProducer({ kafka, contracts, logger: createLogger({ name: 'batch-plan-test', level: 'silent' }), registry: new Registry() });
  const candles = (interval: string) => ({ pool_id: 3, chain_type: 'evm', chain_id: 1, pool_address: '0xab', token: 'base', updated_at: 1, candles: [{ interval, open_time: 60, open: 1, high: 2, low: 0.5, close: 1.5, volume: 7 }] });

  it('is sent as it is, once the value is checked; a value breaking its contract is refused whatever the JSON', () => {
    const value = candles('1m');
    const json = JSON.stringify(value);
    const encoded = producer.encode(TOPICS.klineCandles, { value: value as never, json });
    expect(encoded.value).to.equal(json);
    expect(encoded.key).to.equal(TOPICS.klineCandles.key({ value: value as never }));
    expect(() => producer.encode(TOPICS.klineCandles, { value: candles('2m') as never, json })).to.throw(NonRetryableError, /kline\.candles\.v2: .*interval/);
  });
});
