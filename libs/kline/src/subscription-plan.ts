/**
 * Which upstream socket carries which subscription. The upstream caps subscriptions per socket
 * (each pool × interval × token is one), so the ingester spreads them over as many sockets as
 * needed. Plans are stable: a subscription stays on its socket while it is wanted, new ones fill
 * the first socket with room, and a socket is only opened when all are full.
 */
export type Assignment = string[][];

export interface PlanChange {
  /** Subscriptions per socket after the change (index = socket). */
  next: Assignment;
  adds: Map<number, string[]>;
  removes: Map<number, string[]>;
}

export function planSubscriptions(current: Assignment, wanted: Iterable<string>, limitPerSocket: number): PlanChange {
  if (limitPerSocket < 1) throw new RangeError('limit per socket must be >= 1');
  const want = new Set(wanted);
  const next: Assignment = current.map((subs) => subs.filter((s) => want.has(s)));
  const removes = new Map<number, string[]>();
  current.forEach((subs, i) => {
    const gone = subs.filter((s) => !want.has(s));
    if (gone.length) removes.set(i, gone);
  });
  const placed = new Set(next.flat());
  const adds = new Map<number, string[]>();
  for (const s of [...want].sort()) {
    if (placed.has(s)) continue;
    let i = next.findIndex((subs) => subs.length < limitPerSocket);
    if (i < 0) {
      next.push([]);
      i = next.length - 1;
    }
    next[i].push(s);
    placed.add(s);
    adds.set(i, [...(adds.get(i) ?? []), s]);
  }
  // Trailing sockets left empty are closed; at least one socket always stays.
  while (next.length > 1 && next[next.length - 1].length === 0) next.pop();
  return { next, adds, removes };
}
