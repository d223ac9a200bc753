import { subscriptionKey } from './protocol';

/**
 * What one WebSocket connection wants pushed (pure). A connection starts by following every
 * address of its application. `subscribe` narrows it to an explicit set of (chain type, address)
 * keys; `unsubscribe` removes keys: from the explicit set, or, while the connection follows
 * every address, by muting them. Either way the connection gets no push for a removed key until
 * it subscribes to it again, and removing the last explicit key leaves it wanting nothing: it
 * never widens back to every address.
 */
export class Subscriptions {
  /** null while the connection follows every address of its application. */
  private explicit: Set<string> | null = null;
  /** Keys unsubscribed while following every address. */
  private readonly muted = new Set<string>();

  subscribe(key: string): void {
    this.muted.delete(key);
    (this.explicit ??= new Set()).add(key);
  }

  unsubscribe(keys: readonly string[]): void {
    for (const key of keys) {
      if (this.explicit) this.explicit.delete(key);
      else this.muted.add(key);
    }
  }

  /** Whether a push of this chain type listing these (canonical) addresses goes to the connection. */
  wants(chainType: string, listenAddress: readonly string[]): boolean {
    const explicit = this.explicit;
    if (explicit) return listenAddress.some((a) => explicit.has(subscriptionKey(chainType, a)));
    return this.muted.size === 0 || listenAddress.some((a) => !this.muted.has(subscriptionKey(chainType, a)));
  }
}
