import { Counter, Histogram, type Registry } from 'prom-client';
import { isPlausibleTxHash, type ChainOrigins, type NetworkInfo } from '@chainpipe/chains';
import type { ChainFetchedMessage } from '@chainpipe/contracts';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';
import { toV2Record, type StoredRecord, type V2Record } from '@chainpipe/tx-records';
import { fetchFromOrigin, type OriginLookup } from '@chainpipe/tx-parsers';
import { OriginError, jsonRpcCall } from '@chainpipe/upstreams';
import type { TxQueries } from '@chainpipe/tx-store';
import type { HistoryQuery, TransactionQuery } from '../queries/request';

export interface QueryUseCaseDeps {
  /** The stored transactions' reads (tx-store's TxQueryRepository: tx.transactions and the address indexes). */
  transactions: TxQueries;
  /** The read nodes: the single-transaction GET's origin lookup. */
  origins: ChainOrigins;
  rpcTimeoutMs: number;
  /** Hands a transaction fetched from a node to chain-parser (chain.fetched.v1), acknowledged by the broker. */
  publishFetched: (message: ChainFetchedMessage) => Promise<void>;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
  registry: Registry;
}

function queryMetrics(registry: Registry) {
  return {
    originFetches: new Counter({
      name: 'chainpipe_tx_origin_fetch_total',
      help: 'Single-transaction fetches from a chain origin by network and outcome (found, not_found, timeout, failed)',
      labelNames: ['network', 'outcome'],
      registers: [registry],
    }),
    originDuration: new Histogram({
      name: 'chainpipe_tx_origin_fetch_duration_seconds',
      help: 'Time to fetch and parse one transaction from a chain origin',
      labelNames: ['network'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    originPublishFailures: new Counter({
      name: 'chainpipe_tx_origin_publish_failures_total',
      help: 'Transactions fetched from an origin that could not be handed to chain-parser on chain.fetched.v1 (the response still carried them)',
      labelNames: ['network'],
      registers: [registry],
    }),
  };
}

/** The single-transaction answer: the V2 record or none, or the chain origin's failure (504 / 502). */
export type TransactionAnswer = { kind: 'record'; record: V2Record | null } | { kind: 'origin_timeout' } | { kind: 'origin_failed' };

/** What the history query routes call, with requests already normalised. */
export interface QueryUseCases {
  history(q: HistoryQuery): Promise<StoredRecord[]>;
  byHashes(network: NetworkInfo, hashes: string[]): Promise<StoredRecord[]>;
  transaction(q: TransactionQuery): Promise<TransactionAnswer>;
}

export function queryUseCases(deps: QueryUseCaseDeps): QueryUseCases {
  const repo = deps.transactions;
  const metrics = queryMetrics(deps.registry);
  const log = deps.logger.child({ component: 'queries' });

  const originFetch = async (network: NetworkInfo, txHash: string): Promise<OriginLookup> => {
    const url = deps.origins.urlFor(network.network);
    if (!url) throw new OriginError(`no chain origin configured for ${network.network}`, 'unreachable');
    const end = metrics.originDuration.startTimer({ network: network.network });
    try {
      const lookup = await fetchFromOrigin(network, txHash, (method, params, timeoutMs) => jsonRpcCall(url, method, params, timeoutMs), deps.rpcTimeoutMs, deps.clock);
      metrics.originFetches.inc({ network: network.network, outcome: lookup.found ? 'found' : 'not_found' });
      return lookup;
    } catch (err) {
      const outcome = err instanceof OriginError && err.kind === 'timeout' ? 'timeout' : 'failed';
      metrics.originFetches.inc({ network: network.network, outcome });
      log.warn({ msg: 'origin_fetch_failed', network: network.network, txHash, kind: (err as OriginError).kind, err: errorMessage(err) });
      throw err;
    } finally {
      end();
    }
  };

  return {
    history: (q) => repo.history(q),
    byHashes: (network, hashes) => repo.byHashes(network, hashes),

    /**
     * Stored record unless `no_cache`; else the origin's answer, handed to chain-parser on
     * chain.fetched.v1 before the response. The gateway writes nothing itself: chain-parser stores
     * the record through the stream's own path (merged into what is stored, `changed_by`, and
     * published to chain.tx.v1 when new or changed before its offset is committed), so a fetched
     * transaction is pushed like a streamed one and a later delivery of its block still publishes
     * what it adds. The publish is acknowledged by the broker (acks=all) before the answer, so
     * nothing the origin answered is lost after the response; when it fails the caller still gets
     * the chain's answer and the next request fetches again.
     */
    async transaction(q) {
      const { network, txHash } = q;
      if (!isPlausibleTxHash(network.family, txHash)) return { kind: 'record', record: null };
      if (!q.noCache) {
        const stored = await repo.byHash(network, txHash);
        if (stored) return { kind: 'record', record: toV2Record(stored.record, stored.is_reorg_resend) };
      }
      let lookup: OriginLookup;
      try {
        lookup = await originFetch(network, txHash);
      } catch (err) {
        if (!(err instanceof OriginError)) throw err;
        // The failure's detail (a socket error names the node's host and address) went to the log
        // in originFetch, never to the caller (D174).
        return { kind: err.kind === 'timeout' ? 'origin_timeout' : 'origin_failed' };
      }
      if (!lookup.found) return { kind: 'record', record: null };
      const tx = lookup.tx;
      try {
        await deps.publishFetched({ network: network.network, tx, fetched_at: deps.clock.now() });
      } catch (err) {
        metrics.originPublishFailures.inc({ network: network.network });
        log.warn({ msg: 'origin_tx_publish_failed', network: network.network, txHash, err: errorMessage(err) });
      }
      return { kind: 'record', record: toV2Record(tx, false) };
    },
  };
}
