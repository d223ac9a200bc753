import { Counter, Histogram, type Registry } from 'prom-client';
import type { ChainTxMessage, TxPushMessage } from '@chainpipe/contracts';
import type { BatchHandler, OutgoingMessage } from '@chainpipe/kafka';
import type { Clock, Logger } from '@chainpipe/runtime';
import type { NormalizedTx } from '@chainpipe/tx-parsers';
import type { AddressIndex } from './address-index';
import { deliveryOf, matchRecords, poolsTouched, pushMessages, type AppSwitches } from './plan';

export interface ChainTxHandlerDeps {
  index: () => AddressIndex;
  /** Current switches of the applications (read per batch: they apply when the match is made). */
  switches: (appIds: readonly string[]) => Promise<Map<string, AppSwitches | undefined>>;
  /** Publishes to tx.push.v1; resolves once the broker acknowledged every message. */
  publish: (messages: OutgoingMessage<TxPushMessage>[]) => Promise<void>;
  /** Registered DEX pools (`poolKey`s). */
  pools: () => ReadonlySet<string>;
  /** Appends a transaction to a pool's recent-trades FIFO (idempotent). */
  appendTrade: (pool: string, id: string, tx: NormalizedTx) => Promise<void>;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
  registry: Registry;
}

/**
 * chain.tx.v1 → tx.push.v1. Returns only after every push of the batch is acknowledged, so the
 * consumer commits offsets after the pushes are durable; a crash replays the batch and produces
 * the same message ids (downstream drops what it already delivered).
 */
export function createChainTxHandler(deps: ChainTxHandlerDeps): BatchHandler<ChainTxMessage> {
  const txs = new Counter({ name: 'chainpipe_matcher_txs_total', help: 'chain.tx records matched against the index', registers: [deps.registry] });
  const pushes = new Counter({ name: 'chainpipe_matcher_pushes_total', help: 'tx.push messages emitted, by channel set', labelNames: ['ws', 'webhook'], registers: [deps.registry] });
  const muted = new Counter({ name: 'chainpipe_matcher_muted_total', help: 'Matches not pushed: the application is inactive or has every channel off', registers: [deps.registry] });
  const duration = new Histogram({ name: 'chainpipe_matcher_match_seconds', help: 'Matching time of one batch (index lookups only)', buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5], registers: [deps.registry] });
  const log = deps.logger.child({ component: 'matcher' });

  return async (records) => {
    const end = duration.startTimer();
    const matches = matchRecords(
      deps.index(),
      records.map((r) => r.value),
    );
    end();
    txs.inc(records.length);
    // Pool trades: orphaned transactions left the chain and are not trades any more.
    const pools = deps.pools();
    for (const { value: r } of records) {
      if (r.orphaned) continue;
      for (const pool of poolsTouched(pools, r.tx)) await deps.appendTrade(pool, r.id, r.tx);
    }
    if (matches.length === 0) return;
    const switches = await deps.switches([...new Set(matches.map((m) => m.appId))]);
    // An application that no longer exists gets nothing; one without configuration the defaults.
    const delivery = (appId: string) => (switches.has(appId) ? deliveryOf(switches.get(appId)) : { ws: false, webhook: false });
    const messages = pushMessages(matches, delivery, deps.clock.now());
    muted.inc(matches.length - messages.length);
    for (const m of messages) pushes.inc({ ws: String(m.value.ws), webhook: String(m.value.webhook) });
    await deps.publish(messages);
    log.debug({ msg: 'pushed', records: records.length, matches: matches.length, pushes: messages.length });
  };
}
