import { Counter, Gauge, type Registry } from 'prom-client';
import { errorMessage, systemClock, type Clock, type HealthReport, type Logger } from '@chainpipe/runtime';

export interface PollOutcome {
  /** The source's newest timestamp among what it answered (Unix ms); null when there was nothing to ask. */
  newestAsOf: number | null;
}

export interface PollerOptions {
  source: string;
  intervalMs: number;
  /** A source whose newest data is older than this is stale (not ready). */
  maxAgeMs: number;
  poll: () => Promise<PollOutcome>;
  logger: Logger;
  registry: Registry;
  /** Time of the poll schedule and of the data's age. */
  clock?: Pick<Clock, 'now' | 'sleep'>;
  /**
   * Wait before the next poll while the source has never had anything to ask for (e.g. the
   * reference tokens are not loaded yet at start): without it the first real poll would come a
   * whole interval later and the API would answer empty lists meanwhile. Default min(interval, 1 s).
   */
  emptyRetryMs?: number;
}

/** Polls per source and outcome; one counter per registry, shared by the pollers. */
function pollCounter(registry: Registry): Counter<'source' | 'outcome'> {
  const existing = registry.getSingleMetric('chainpipe_price_source_polls_total') as Counter<'source' | 'outcome'> | undefined;
  return existing ?? new Counter({ name: 'chainpipe_price_source_polls_total', help: 'Polls of an upstream source by outcome', labelNames: ['source', 'outcome'], registers: [registry] });
}

/**
 * The staleness of every poller, computed at scrape time so the age keeps growing while a
 * source is down: `chainpipe_price_source_age_seconds` (now minus the source's newest own
 * timestamp) and `chainpipe_price_source_stale` (1 past the configured maximum age).
 */
export function registerStalenessMetrics(registry: Registry, pollers: readonly SourcePoller[]): void {
  new Gauge({
    name: 'chainpipe_price_source_age_seconds',
    help: "Age of the source's newest data by its own timestamps; grows while the source is stale or down",
    labelNames: ['source'],
    registers: [registry],
    collect() {
      for (const p of pollers) {
        const age = p.ageMs();
        if (age !== null) this.set({ source: p.source }, age / 1000);
      }
    },
  });
  new Gauge({
    name: 'chainpipe_price_source_stale',
    help: '1 while the source has no data younger than its configured maximum age',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      for (const p of pollers) this.set({ source: p.source }, p.isStale() ? 1 : 0);
    },
  });
}

/**
 * Polls one upstream on an interval (first poll at once). A failed poll is logged and counted and
 * the next one comes on schedule; the data's age (the source's own timestamps) is what decides
 * readiness, so a source that answers with old data is as stale as one that is down.
 */
export class SourcePoller {
  private readonly polls: Counter<'source' | 'outcome'>;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private newestAsOf: number | null = null;
  private polledOnce = false;
  private lastError?: string;
  private readonly clock: Pick<Clock, 'now' | 'sleep'>;

  constructor(private readonly opts: PollerOptions) {
    this.polls = pollCounter(opts.registry);
    this.clock = opts.clock ?? systemClock;
  }

  get source(): string {
    return this.opts.source;
  }

  ageMs(): number | null {
    return this.newestAsOf === null ? null : Math.max(0, this.clock.now() - this.newestAsOf);
  }

  isStale(): boolean {
    if (!this.polledOnce) return true;
    const age = this.ageMs();
    return age !== null && age > this.opts.maxAgeMs;
  }

  start(): void {
    this.loop = (async () => {
      while (!this.abort.signal.aborted) {
        const outcome = await this.pollOnce();
        const nothingYet = outcome !== undefined && outcome.newestAsOf === null && this.newestAsOf === null;
        await this.clock.sleep(nothingYet ? (this.opts.emptyRetryMs ?? Math.min(this.opts.intervalMs, 1_000)) : this.opts.intervalMs, this.abort.signal);
      }
    })();
  }

  /** One poll; the outcome, or undefined when it failed (logged and counted). */
  async pollOnce(): Promise<PollOutcome | undefined> {
    const { source } = this.opts;
    try {
      const out = await this.opts.poll();
      this.polledOnce = true;
      this.lastError = undefined;
      if (out.newestAsOf !== null) this.newestAsOf = Math.max(this.newestAsOf ?? 0, out.newestAsOf);
      this.polls.inc({ source, outcome: 'ok' });
      return out;
    } catch (err) {
      this.lastError = errorMessage(err);
      this.polls.inc({ source, outcome: 'failed' });
      this.opts.logger.warn({ msg: 'source_poll_failed', source, err: this.lastError });
      return undefined;
    }
  }

  /** Ready while the data is fresh; stale data or a source never polled successfully is not. */
  ready(): boolean {
    return !this.isStale();
  }

  health(): HealthReport {
    if (this.isStale()) return { state: 'degraded', detail: this.lastError ?? `newest data older than ${this.opts.maxAgeMs} ms` };
    return { state: 'ok' };
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }
}
