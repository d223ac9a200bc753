import { randomUUID } from 'node:crypto';
import type { Logger } from '@chainpipe/runtime';
import { wrapStreamBatch, type DisplacedBlock, type StreamBatch } from '../replay/stream-batch';
import type { JsonObject } from './json';

/** A block a ledger mined: as its node serves it, and as the stream delivers it (`dataset`, one `item`). */
export interface ProducedBlock {
  number: number;
  /** The node's form (EVM: `eth_getBlockByNumber` with full transactions; Bitcoin: Core's `getblock … 2`; Solana: `getBlock`). */
  block: JsonObject;
  /** EVM receipts; none on Bitcoin and Solana. */
  receipts: JsonObject[];
  /** The streamer's dataset of the chain (`block_with_receipts`, Bitcoin's and Solana's `block`) and the element of `data` it posts. */
  dataset: string;
  item: unknown;
}

/** What a reorg did: the blocks it displaced (head last) and the blocks that took their heights, in order. */
export interface ReorgResult {
  displaced: DisplacedBlock[];
  produced: ProducedBlock[];
}

/** A simulated chain that takes signed transactions and mines them (`EvmLedger`, `BitcoinLedger`, `SolanaLedger`). */
export interface BlockLedger {
  readonly network: string;
  /** False until a transaction was ever sent: a dormant chain produces no blocks. */
  readonly active: boolean;
  produceBlock(timestampSec: number): ProducedBlock;
  /** Chains that reorganise (EVM, Bitcoin, Tron): replaces the last `depth` produced blocks; throws when it cannot. */
  reorg?(depth: number, timestampSec: number, opts?: { requeue?: boolean }): ReorgResult;
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
  /** Reorgs by themselves: on each tick a chain that can reorganises its head with this chance (0 to 1), by 1 to `maxDepth` blocks. */
  randomReorgs?: { chance: number; maxDepth: number; random: () => number };
}

/**
 * Mines a block (a slot on Solana) on every tick for each simulated chain (EVM, Bitcoin, Solana)
 * that ever received a transaction (a dormant chain stays still, so the stream is not flooded
 * with empty blocks of every network), and delivers the blocks to chain-ingest in order, in the
 * dataset the streamer sends of the chain (EVM `block_with_receipts`, Bitcoin's and Solana's
 * `block`). A delivery that fails is tried again on the next tick before any newer block, as a
 * stream does.
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
        this.maybeReorg(ledger);
        const produced = ledger.produceBlock(this.deps.nowSec());
        this.deps.onBlock?.(ledger.network, produced.block, produced.receipts);
        const list = produced.block.transactions ?? produced.block.tx;
        const txs = Array.isArray(list) ? list.length : 0;
        if (txs > 0) this.deps.logger.info({ msg: 'sim_block_produced', network: ledger.network, number: produced.number, txs });
        this.enqueue(ledger.network, [produced]);
      }
      if (this.deps.target) await this.deliver(this.deps.target);
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Reorganises the head of `network` by `depth` blocks (the control route, or the random rate):
   * the replacement blocks go to the watchers and to the stream as one batch, as the streamer
   * re-delivers the canonical blocks after a reorg, with `blocks_reorged` (their heights) and
   * `reorgs` (each displaced block's number, hash and timestamp). Throws when the chain cannot.
   */
  reorg(network: string, depth: number, opts: { requeue?: boolean } = {}): ReorgResult {
    const ledger = this.deps.ledgers.find((l) => l.network === network);
    if (!ledger?.reorg) throw new Error(`${network} does not reorganise in the simulator`);
    const result = ledger.reorg(depth, this.deps.nowSec(), opts);
    for (const p of result.produced) this.deps.onBlock?.(network, p.block, p.receipts);
    this.deps.logger.info({ msg: 'sim_chain_reorg', network, depth, displaced: result.displaced.map((d) => d.hash), requeue: opts.requeue ?? false });
    this.enqueue(network, result.produced, result.displaced);
    return result;
  }

  private maybeReorg(ledger: BlockLedger): void {
    const rate = this.deps.randomReorgs;
    if (!rate || rate.chance <= 0 || !ledger.reorg || rate.random() >= rate.chance) return;
    const depth = 1 + Math.floor(rate.random() * rate.maxDepth);
    try {
      this.reorg(ledger.network, depth);
    } catch {
      // fewer blocks produced yet than the depth drawn: no reorg this time
    }
  }

  private enqueue(network: string, produced: ProducedBlock[], displaced?: DisplacedBlock[]): void {
    if (!this.deps.target || produced.length === 0) return;
    const first = produced[0].number;
    const last = produced[produced.length - 1].number;
    const queue = this.backlog.get(network) ?? [];
    queue.push({
      network,
      dataset: produced[0].dataset,
      items: produced.map((p) => p.item),
      startRange: first,
      endRange: last,
      label: `${network}-${first}${last === first ? '' : `-${last}`}${displaced ? '-reorg' : ''}`,
      ...(displaced ? { displaced } : {}),
    });
    this.backlog.set(network, queue);
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
