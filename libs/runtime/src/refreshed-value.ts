import { type Clock, systemClock } from './clock';

export interface RefreshedValueOptions<T> {
  load: () => Promise<T>;
  /** A value older than this is loaded again in the background; requests keep the one they have. */
  refreshMs: number;
  /** A value older than this is not answered from: the request waits for a new load. */
  maxAgeMs?: number;
  clock?: Pick<Clock, 'now'>;
}

/**
 * A value read from a store and held in memory (reference rows, a channel list), so a request
 * costs no round trip for it. Loads are shared: concurrent requests wait for one. Once older than
 * `refreshMs` it is loaded again behind the requests that read it; once older than `maxAgeMs`
 * (counted from when its load began) a request waits for a new one, which bounds how stale an
 * answer can be after a quiet spell. A failed load fails the requests waiting for it and leaves
 * the value held before.
 */
export class RefreshedValue<T> {
  private current?: { value: T; at: number };
  private loading?: Promise<T>;
  private readonly clock: Pick<Clock, 'now'>;

  constructor(private readonly opts: RefreshedValueOptions<T>) {
    this.clock = opts.clock ?? systemClock;
  }

  /** When the held value's load began (undefined before the first). */
  get loadedAt(): number | undefined {
    return this.current?.at;
  }

  /** Loads now (or joins the load under way). */
  reload(): Promise<T> {
    if (!this.loading) {
      const at = this.clock.now();
      this.loading = this.opts.load().then(
        (value) => {
          this.current = { value, at };
          this.loading = undefined;
          return value;
        },
        (err: unknown) => {
          this.loading = undefined;
          throw err;
        },
      );
    }
    return this.loading;
  }

  /** The held value if young enough; a background reload once older than `refreshMs`. */
  async get(): Promise<T> {
    const held = this.current;
    if (!held) return this.reload();
    const age = this.clock.now() - held.at;
    if (age > (this.opts.maxAgeMs ?? Infinity)) return this.reload();
    if (age > this.opts.refreshMs) void this.reload().catch(() => undefined);
    return held.value;
  }
}
