/**
 * Load and the delivery invariant of the fault suite: a streamer posting real blocks to
 * chain-ingest while a fault happens, and the check that follows the recovery:
 * acknowledged ⇒ stored ⇒ published, once as a client sees it.
 */
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import type { Knex } from 'knex';
import { bitcoinBlockItem, randomSuffix, rebaseBlock, streamerBody } from './chain-blocks';
import { waitFor } from './wait';

/** One POST /stream and what the streamer saw. */
export interface Delivery {
  height: number;
  /** Transaction ids of the delivered block (its `tx[].txid`, rebased). */
  txids: string[];
  status: number;
  retryAfter: string | null;
  /** When it was sent (epoch ms) and how long the answer took. */
  at: number;
  ms: number;
}

/**
 * A streamer posting Bitcoin block 766393 (8 transactions; test/fixtures/chain/bitcoin), each
 * time under a new height and with its hashes made unique for the run, to `POST /stream` with
 * `concurrency` requests in flight and a pause of `pauseMs` after each answer. It never resends:
 * a block answered with anything but 200 is simply not acknowledged, which is what the
 * invariant must cope with.
 */
export class StreamerLoad {
  readonly deliveries: Delivery[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private nextHeight: number;
  private readonly item = bitcoinBlockItem(766393);

  constructor(
    private readonly opts: { url: string; secret: string; concurrency?: number; pauseMs?: number; firstHeight?: number; timeoutMs?: number },
  ) {
    this.nextHeight = opts.firstHeight ?? 900_000;
  }

  start(): this {
    this.running = true;
    for (let i = 0; i < (this.opts.concurrency ?? 4); i++) this.loops.push(this.loop());
    return this;
  }

  async stop(): Promise<Delivery[]> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
    return this.deliveries;
  }

  get acknowledged(): Delivery[] {
    return this.deliveries.filter((d) => d.status === 200);
  }

  /** Deliveries answered after `t` (epoch ms). */
  since(t: number): Delivery[] {
    return this.deliveries.filter((d) => d.at >= t);
  }

  /** Waits until `n` more deliveries than now were acknowledged. */
  async waitAcked(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.acknowledged.length + n;
    await waitFor(() => this.acknowledged.length >= target, { timeoutMs, intervalMs: 50, what: `${n} more acknowledged deliveries (have ${this.acknowledged.length}/${target})` });
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const height = this.nextHeight++;
      const rebased = rebaseBlock('utxo', this.item, height, randomSuffix());
      const body = streamerBody([rebased.item], { network: 'bitcoin-mainnet', dataset: 'block', start: height });
      const txids: string[] = rebased.item.tx.map((t: { txid: string }) => t.txid);
      const at = Date.now();
      let status = 0;
      let retryAfter: string | null = null;
      try {
        const res = await fetch(`${this.opts.url}/stream`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'content-secret-x': this.opts.secret, 'cl-stream-network': 'bitcoin-mainnet' },
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
        status = res.status;
        retryAfter = res.headers.get('retry-after');
        await res.arrayBuffer();
      } catch {
        status = 0; // connection refused or reset: the app is down (being restarted)
      }
      this.deliveries.push({ height, txids, status, retryAfter, at, ms: Date.now() - at });
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      else if (this.opts.pauseMs) await new Promise((r) => setTimeout(r, this.opts.pauseMs));
    }
  }
}

/** Every message of `topic` up to its end offsets at the time of the call. */
export async function readTopicToEnd(brokers: string[], topic: string, timeoutMs = 30_000): Promise<KafkaMessage[]> {
  const kafka = new Kafka({ clientId: 'fault-reader', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
  await admin.disconnect();
  const got: KafkaMessage[] = [];
  const reached = new Map<number, bigint>();
  const consumer = kafka.consumer({ groupId: `fault-reader-${Date.now()}-${Math.random().toString(36).slice(2)}`, maxBytesPerPartition: 16 * 1024 * 1024 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        got.push(message);
        reached.set(partition, BigInt(message.offset) + 1n);
      },
    });
    const progress = () => [...ends].map(([p, end]) => `partition ${p} at ${reached.get(p) ?? 0n} of ${end}`).join(', ');
    await waitFor(() => [...ends].every(([p, end]) => end === 0n || (reached.get(p) ?? 0n) >= end), { timeoutMs, what: () => `the end of ${topic} (${progress()})` });
    return got;
  } finally {
    await consumer.disconnect();
  }
}

export interface DeliveryCheck {
  deliveries: number;
  transactions: number;
  /** chain.tx messages for the acknowledged transactions; above `transactions` means replays. */
  messages: number;
}

/**
 * The invariant after a fault: every transaction of every acknowledged delivery is stored
 * exactly once and published on `chainTxTopic` under its stored id, and every message about it
 * carries that same id (a replay repeats, it never changes what a client sees). Waits up to
 * `timeoutMs` for the pipeline to drain; throws with what is missing.
 */
export async function checkAcknowledgedStoredPublished(opts: {
  db: Knex;
  brokers: string[];
  chainTxTopic: string;
  acknowledged: Delivery[];
  timeoutMs?: number;
}): Promise<DeliveryCheck> {
  const txids = [...new Set(opts.acknowledged.flatMap((d) => d.txids))];
  const stored = new Map<string, string>();
  await waitFor(
    async () => {
      for (let i = 0; i < txids.length; i += 1000) {
        const rows = await opts.db('tx.transactions')
          .select('tx_hash', 'id')
          .where({ chain_type: 'bitcoin', chain_id: 1 })
          .whereIn('tx_hash', txids.slice(i, i + 1000));
        for (const r of rows) {
          if (stored.has(r.tx_hash) && stored.get(r.tx_hash) !== String(r.id)) throw new Error(`${r.tx_hash} stored twice`);
          stored.set(r.tx_hash, String(r.id));
        }
      }
      return stored.size === txids.length;
    },
    { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 250, what: () => `every acknowledged transaction stored (${stored.size}/${txids.length})` },
  );
  const published = new Map<string, Set<string>>();
  let messages = 0;
  await waitFor(
    async () => {
      published.clear();
      messages = 0;
      for (const m of await readTopicToEnd(opts.brokers, opts.chainTxTopic)) {
        const value = JSON.parse(m.value!.toString()) as { id: string; tx: { tx_hash: string } };
        if (!stored.has(value.tx.tx_hash)) continue;
        messages += 1;
        const ids = published.get(value.tx.tx_hash) ?? new Set<string>();
        ids.add(value.id);
        published.set(value.tx.tx_hash, ids);
      }
      return published.size === txids.length;
    },
    { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 500, what: () => `every stored transaction published (${published.size}/${txids.length}, ${messages} messages read)` },
  );
  for (const [hash, ids] of published) {
    if (ids.size !== 1 || !ids.has(stored.get(hash)!)) throw new Error(`${hash} published with ids ${[...ids].join(',')}, stored as ${stored.get(hash)}`);
  }
  return { deliveries: opts.acknowledged.length, transactions: txids.length, messages };
}
