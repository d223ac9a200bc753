import { Counter, type Registry } from 'prom-client';
import { networkByName, type NetworkInfo } from '@chainpipe/chains';
import { errorMessage, type Logger } from '@chainpipe/runtime';
import type { NormalizedTx, OriginLookup } from '@chainpipe/tx-parsers';
import type { PendingTx } from '@chainpipe/tx-store';

/** What a pass needs: the pending rows, the chain origin, and the hand-over to chain-parser. */
export interface CompensatorDeps {
  pending(): Promise<PendingTx[]>;
  lookup(network: NetworkInfo, txHash: string): Promise<OriginLookup>;
  /** Hands transactions now final to chain-parser (chain.fetched.v1); resolves once the broker has them. */
  handOver(network: NetworkInfo, txs: NormalizedTx[]): Promise<void>;
  /** Notes that these rows were looked at and are still pending (so the next pass starts with others). */
  markChecked(ids: string[]): Promise<void>;
  concurrency: number;
  logger: Logger;
  registry: Registry;
}

export type CheckOutcome = 'settled' | 'still_pending' | 'not_found' | 'origin_failed' | 'unknown_network';

/**
 * One pass of the pending-compensator (DESIGN: "once a minute, re-checks pending transactions at
 * the chain origin"): every pending transaction is fetched from its chain's node with the same
 * fetch and parser as tx-gateway's origin look-up; one the node calls final (`success`,
 * `failed`) is handed to chain-parser on chain.fetched.v1, as tx-gateway's look-ups are, which
 * merges it into the stored row (status forward only) and publishes the change to chain.tx.v1,
 * so tx-matcher pushes it (a new message id: the status is part of it). A transaction still
 * pending, unknown to the node, or whose node failed is left pending for the next pass.
 */
export function createCompensator(deps: CompensatorDeps): () => Promise<Record<CheckOutcome, number>> {
  const checks = new Counter({ name: 'chainpipe_pending_checks_total', help: 'Pending transactions checked at their chain origin, by outcome', labelNames: ['outcome'], registers: [deps.registry] });
  const log = deps.logger.child({ component: 'pending-compensator' });

  return async () => {
    const counts: Record<CheckOutcome, number> = { settled: 0, still_pending: 0, not_found: 0, origin_failed: 0, unknown_network: 0 };
    const rows = await deps.pending();
    const final = new Map<string, { network: NetworkInfo; txs: NormalizedTx[] }>();
    const untouched: string[] = [];
    const check = async (row: PendingTx): Promise<CheckOutcome> => {
      const network = networkByName(row.network);
      if (!network) return 'unknown_network';
      let lookup: OriginLookup;
      try {
        lookup = await deps.lookup(network, row.tx_hash);
      } catch (err) {
        log.warn({ msg: 'origin_check_failed', network: row.network, txHash: row.tx_hash, err: errorMessage(err) });
        return 'origin_failed';
      }
      if (!lookup.found) return 'not_found';
      if (lookup.tx.tx_status !== 'success' && lookup.tx.tx_status !== 'failed') return 'still_pending';
      const entry = final.get(network.network) ?? { network, txs: [] };
      entry.txs.push(lookup.tx);
      final.set(network.network, entry);
      return 'settled';
    };
    for (let i = 0; i < rows.length; i += deps.concurrency) {
      const part = rows.slice(i, i + deps.concurrency);
      const outcomes = await Promise.all(part.map(check));
      outcomes.forEach((o, k) => {
        counts[o]++;
        if (o !== 'settled') untouched.push(part[k].id);
      });
    }
    for (const { network, txs } of final.values()) await deps.handOver(network, txs);
    await deps.markChecked(untouched);
    for (const [outcome, n] of Object.entries(counts)) if (n) checks.inc({ outcome }, n);
    if (rows.length) log.info({ msg: 'pending_pass', checked: rows.length, ...counts });
    return counts;
  };
}
