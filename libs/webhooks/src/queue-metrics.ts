import { Gauge, type Registry } from 'prom-client';
import type { Knex } from '@chainpipe/db';
import { systemClock, type Clock } from '@chainpipe/runtime';

export interface QueueMetricsDeps {
  db: Knex;
  registry: Registry;
  clock?: Pick<Clock, 'now'>;
}

/**
 * The retry queue (tx.webhook_queue) as metrics: how many transactions wait and how long the
 * oldest has waited since its first failed POST. `refresh` reads the table (a periodic job calls
 * it); the age is computed at scrape time from the last read, so it keeps growing while the
 * database cannot be read, and a scrape never waits for Postgres. Every copy of the dispatcher
 * reports the same shared queue: aggregate with max(), not sum().
 */
export function webhookQueueMetrics(deps: QueueMetricsDeps): { refresh: () => Promise<void> } {
  const clock = deps.clock ?? systemClock;
  let oldestFirstFailedAt: number | null = null;
  const items = new Gauge({ name: 'chainpipe_webhook_queue_items', help: 'Transactions waiting in the webhook retry queue (all applications)', registers: [deps.registry] });
  new Gauge({
    name: 'chainpipe_webhook_queue_oldest_age_seconds',
    help: 'Time since the first failed POST of the oldest queued transaction; 0 when the queue is empty',
    registers: [deps.registry],
    collect() {
      this.set(oldestFirstFailedAt === null ? 0 : Math.max(0, clock.now() - oldestFirstFailedAt) / 1000);
    },
  });
  return {
    async refresh() {
      const row = (await deps.db('tx.webhook_queue').first(deps.db.raw('count(*) as n'), deps.db.raw('min(first_failed_at) as oldest'))) as { n: string | number; oldest: string | number | null } | undefined;
      items.set(Number(row?.n ?? 0));
      oldestFirstFailedAt = row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest);
    },
  };
}
