import { randomUUID } from 'node:crypto';
import type { Logger } from '@chainpipe/runtime';
import { wrapStreamBatch, type StreamBatch } from '../replay/stream-batch';
import type { EvmLedger } from './evm-ledger';
import type { JsonObject } from './json';

/** Where produced blocks go: chain-ingest's `POST /stream`, as the streamer posts them. */
export interface StreamTarget {
  url: string;
  secret: string;
}

/** A produced block as the streamer delivers it: its dataset's item, and the raw EVM parts for chain watchers. */
export interface ProducedBlock {
  number: number;
  /** The streamer dataset the item belongs to (`block_with_receipts` for EVM, `block` for Solana). */
  dataset: string;
  item: unknown;
  txs: number;
  /** EVM chains: the block and its receipts, for the watchers of `onBlock` (the simulated THORChain). */
  evm?: { block: JsonObject; receipts: JsonObject[] };
}

/** A simulated chain that produces blocks of what was sent to it (EVM ledgers, the Solana ledger). */
export interface BlockLedger {
  /** False while nothing was ever sent: a dormant chain produces nothing. */
  readonly active: boolean;
  readonly network: string;
  produceBlock(nowSec: number): ProducedBlock;
}

/** An EVM ledger as a block ledger: `block_with_receipts` items. */
export function evmBlockLedger(ledger: EvmLedger): BlockLedger {
  return {
    get active() {
      return ledger.active;
    },
    network: ledger.network,
    produceBlock(nowSec) {
      const { number, block, receipts } = ledger.produceBlock(nowSec);
      return { number, dataset: 'block_with_receipts', item: { block, receipts }, txs: Array.isArray(block.transactions) ? block.transactions.length : 0, evm: { block, receipts } };
    },
  };
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
 * Mines a block (a slot on Solana) on every tick for each simulated chain that ever received a
 * transaction (a dormant chain stays still, so the stream is not flooded with empty blocks of
 * every network), and delivers the blocks to chain-ingest in order, each in its chain's dataset. A delivery
 * that fails is tried again on the next tick before any newer block, as a stream does.
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
        const { number, dataset, item, txs, evm } = ledger.produceBlock(this.deps.nowSec());
        if (evm) this.deps.onBlock?.(ledger.network, evm.block, evm.receipts);
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
