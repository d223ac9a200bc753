/**
 * Which applications monitor which address, per chain type, in memory. Pure.
 *
 * Built for a million addresses: one Map per chain type keyed by the address as stored (no
 * concatenated keys), and applications interned to small integers, so an address watched by one
 * application costs one Map entry holding a number (an array only for addresses several
 * applications share). A lookup is one hash probe per party of a transaction.
 */
export class AddressIndex {
  private readonly byChain = new Map<string, Map<string, number | number[]>>();
  private readonly appIds: string[] = [];
  private readonly appNumbers = new Map<string, number>();
  private entries = 0;

  /** Addresses × applications indexed. */
  get size(): number {
    return this.entries;
  }

  private appNumber(appId: string): number {
    let n = this.appNumbers.get(appId);
    if (n === undefined) {
      n = this.appIds.length;
      this.appIds.push(appId);
      this.appNumbers.set(appId, n);
    }
    return n;
  }

  add(appId: string, chainType: string, address: string): void {
    let chain = this.byChain.get(chainType);
    if (!chain) this.byChain.set(chainType, (chain = new Map()));
    const app = this.appNumber(appId);
    const cur = chain.get(address);
    if (cur === undefined) chain.set(address, app);
    else if (typeof cur === 'number') {
      if (cur === app) return;
      chain.set(address, [cur, app]);
    } else {
      if (cur.includes(app)) return;
      cur.push(app);
    }
    this.entries += 1;
  }

  remove(appId: string, chainType: string, address: string): void {
    const chain = this.byChain.get(chainType);
    const app = this.appNumbers.get(appId);
    if (!chain || app === undefined) return;
    const cur = chain.get(address);
    if (cur === undefined) return;
    if (typeof cur === 'number') {
      if (cur !== app) return;
      chain.delete(address);
    } else {
      const i = cur.indexOf(app);
      if (i < 0) return;
      cur.splice(i, 1);
      chain.set(address, cur.length === 1 ? cur[0] : cur);
    }
    this.entries -= 1;
  }

  /** Applications monitoring the address (empty when none). */
  appsOf(chainType: string, address: string): string[] {
    const cur = this.byChain.get(chainType)?.get(address);
    if (cur === undefined) return [];
    return typeof cur === 'number' ? [this.appIds[cur]] : cur.map((n) => this.appIds[n]);
  }

  /**
   * The applications among `addresses` (one transaction's parties, canonical form) and, per
   * application, the addresses it monitors, sorted: one push per application with all of them.
   */
  match(chainType: string, addresses: Iterable<string>): Map<string, string[]> {
    const out = new Map<string, string[]>();
    const chain = this.byChain.get(chainType);
    if (!chain) return out;
    for (const address of addresses) {
      const cur = chain.get(address);
      if (cur === undefined) continue;
      for (const n of typeof cur === 'number' ? [cur] : cur) {
        const appId = this.appIds[n];
        const list = out.get(appId);
        if (list) {
          if (!list.includes(address)) list.push(address);
        } else out.set(appId, [address]);
      }
    }
    for (const list of out.values()) list.sort();
    return out;
  }
}
