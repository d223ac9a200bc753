import { randomUUID } from 'node:crypto';
import type { Logger } from '@chainpipe/runtime';
import { wrapStreamBatch, type StreamBatch } from '../replay/stream-batch';
import type { JsonObject } from './json';

/** A block a ledger mined: as its node serves it, and as the stream delivers it (`dataset`, one `item`). */
export interface ProducedBlock {
  number: number;
  /** The node's form (EVM: `eth_getBlockByNumber` with full transactions; Bitcoin: Core's `getblock … 2`). */
  block: JsonObject;
  /** EVM receipts; none on Bitcoin. */
  receipts: JsonObject[];
  /** The streamer's dataset of the chain (`block_with_receipts`, Bitcoin's `block`) and the element of `data` it posts. */
  dataset: string;
  item: unknown;
}

/** A simulated chain that takes signed transactions and mines them (`EvmLedger`, `BitcoinLedger`). */
export interface BlockLedger {
  readonly network: string;
  /** False until a transaction was ever sent: a dormant chain produces no blocks. */
  readonly active: boolean;
  produceBlock(timestampSec: number): ProducedBlock;
}

/** Where produced blocks go: chain-ingest's `POST /stream`, as the streamer posts them. */
export interface StreamTarget {
  url: string;
  secret: string;
}

export interface BlockProducerDeps {
  ledgers: readonly BlockLedger[];
  logger: Logger;
  /** Unset: blocks are only served by the nodes, never posted. */
  target?: StreamTarget;
  nowSec: () => number;
  post?: typeof fetch;
  /** Watchers of the chains (the simulated THORChain), given every produced block. */
  onBlock?: (network: string, block: JsonObject, receipts: JsonObject[]) => void;
}

/**
 * Mines a block on every tick for each chain (EVM, Bitcoin) that ever received a transaction (a
 * dormant chain stays still, so the stream is not flooded with empty blocks of every network),
 * and delivers the blocks to chain-ingest in order, in the dataset the streamer sends of the
 * chain (EVM `block_with_receipts`, Bitcoin `block`). A delivery that fails is tried again on
 * the next tick before any newer block, as a stream does.
 */
export class BlockProducer {
  private readonly backlog = new Map<string, StreamBatch[]>();
  private readonly streamId = randomUUID();
  private ticking = false;

  constructor(private readonly deps: BlockProducerDeps) {}

  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      for (const ledger of this.deps.ledgers) {
        if (!ledger.active) continue;
        const { number, block, receipts, dataset, item } = ledger.produceBlock(this.deps.nowSec());
        this.deps.onBlock?.(ledger.network, block, receipts);
        const list = block.transactions ?? block.tx;
        const txs = Array.isArray(list) ? list.length : 0;
        if (txs > 0) this.deps.logger.info({ msg: 'sim_block_produced', network: ledger.network, number, txs });
        if (!this.deps.target) continue;
        const queue = this.backlog.get(ledger.network) ?? [];
        queue.push({ network: ledger.network, dataset, items: [item], startRange: number, endRange: number, label: `${ledger.network}-${number}` });
        this.backlog.set(ledger.network, queue);
      }
      if (this.deps.target) await this.deliver(this.deps.target);
    } finally {
      this.ticking = false;
    }
  }

  private async deliver(target: StreamTarget): Promise<void> {
    const post = this.deps.post ?? fetch;
    for (const [network, queue] of this.backlog) {
      while (queue.length > 0) {
        const batch = queue[0];
        const delivery = wrapStreamBatch(batch, { secret: target.secret, streamId: this.streamId, streamName: 'chainpipe-upstream-sim' });
        try {
          const res = await post(target.url, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: AbortSignal.timeout(10_000) });
          await res.text();
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          queue.shift();
        } catch (err) {
          this.deps.logger.warn({ msg: 'sim_block_delivery_failed', network, number: batch.startRange, backlog: queue.length, err: (err as Error).message });
          break;
        }
      }
    }
  }
}
