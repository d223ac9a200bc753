import type { Admin, Kafka } from 'kafkajs';
import { errorMessage, systemClock, type Clock, type HealthReport, type Timer } from '@chainpipe/runtime';

export interface BrokerLinkOptions {
  /** Resolves when a broker answered a request (a metadata request, say); rejects otherwise. */
  probe: () => Promise<void>;
  /** Probe period while the broker is down: how soon a recovery is noticed. */
  downProbeMs?: number;
  /** With no acknowledged send for this long, probe: an idle client still notices an outage. */
  idleProbeMs?: number;
  /** A probe not answered by then counts as failed. */
  probeTimeoutMs?: number;
  onChange?: (up: boolean, detail: string | undefined) => void;
  /** Injected so the link's state changes can be tested without waiting. */
  clock?: Pick<Clock, 'now' | 'setTimeout'>;
}

/**
 * What a client knows about its broker: `up` after an acknowledged send or an answered probe,
 * `down` after a send or probe failed for a broker reason (connection refused, timeout). While
 * down it probes every `downProbeMs`, so callers that refuse work during an outage (ingestion's
 * fast 503) see the broker back within one period; while up and idle it probes every
 * `idleProbeMs`, so readiness turns false during an outage even without traffic.
 */
export class BrokerLink {
  private state: 'up' | 'down' = 'up';
  private detail?: string;
  private lastAnswer: number;
  private timer?: Timer;
  private probing = false;
  private stopped = true;
  private readonly clock: Pick<Clock, 'now' | 'setTimeout'>;
  private readonly downProbeMs: number;
  private readonly idleProbeMs: number;
  private readonly probeTimeoutMs: number;

  constructor(private readonly opts: BrokerLinkOptions) {
    this.clock = opts.clock ?? systemClock;
    this.downProbeMs = opts.downProbeMs ?? 500;
    this.idleProbeMs = opts.idleProbeMs ?? 2_000;
    this.probeTimeoutMs = opts.probeTimeoutMs ?? 2_000;
    this.lastAnswer = this.clock.now();
  }

  get up(): boolean {
    return this.state === 'up';
  }

  /** `ok` while up; `degraded` (not ready, but alive: a restart would not bring the broker back) while down. */
  health(): HealthReport {
    return this.up ? { state: 'ok' } : { state: 'degraded', detail: `broker unreachable: ${this.detail ?? 'unknown'}` };
  }

  /** A broker acknowledged something. */
  succeeded(): void {
    this.lastAnswer = this.clock.now();
    this.set('up', undefined);
  }

  /** A request failed for a broker reason. */
  failed(err: unknown): void {
    this.set('down', errorMessage(err));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.lastAnswer = this.clock.now();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private set(state: 'up' | 'down', detail: string | undefined): void {
    const changed = state !== this.state;
    this.state = state;
    this.detail = detail;
    if (changed) {
      this.opts.onChange?.(state === 'up', detail);
      this.schedule();
    }
  }

  /** One timer: the next probe is due `downProbeMs` after going down, or `idleProbeMs` after the last answer. */
  private schedule(): void {
    if (this.stopped) return;
    this.timer?.cancel();
    const wait = this.up ? Math.max(0, this.lastAnswer + this.idleProbeMs - this.clock.now()) : this.downProbeMs;
    // The link must not keep a stopping process alive.
    this.timer = this.clock
      .setTimeout(() => {
        this.timer = undefined;
        void this.tick();
      }, wait)
      .unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.up && this.clock.now() - this.lastAnswer < this.idleProbeMs) return this.schedule();
    if (!this.probing) {
      this.probing = true;
      try {
        await this.withTimeout(this.opts.probe());
        this.succeeded();
      } catch (err) {
        this.failed(err);
      } finally {
        this.probing = false;
      }
    }
    this.schedule();
  }

  private withTimeout(p: Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const t = this.clock.setTimeout(() => reject(new Error(`no answer in ${this.probeTimeoutMs} ms`)), this.probeTimeoutMs).unref();
      p.then(
        () => {
          t.cancel();
          resolve();
        },
        (err: unknown) => {
          t.cancel();
          reject(err);
        },
      );
    });
  }
}

/**
 * A probe that asks the cluster for its brokers over an admin client of its own, without
 * kafkajs' retries (the link retries on its own schedule). Close it with `close()`.
 */
export function metadataProbe(kafka: Kafka): { probe: () => Promise<void>; close: () => Promise<void> } {
  let admin: Admin | undefined;
  let connected = false;
  return {
    probe: async () => {
      admin ??= kafka.admin({ retry: { retries: 0 } });
      try {
        if (!connected) {
          await admin.connect();
          connected = true;
        }
        await admin.describeCluster();
      } catch (err) {
        // A fresh connection next time: kafkajs keeps a broken socket's state otherwise.
        connected = false;
        await admin.disconnect().catch(() => undefined);
        throw err;
      }
    },
    close: async () => {
      if (admin) await admin.disconnect().catch(() => undefined);
      connected = false;
    },
  };
}
