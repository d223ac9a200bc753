import type { TxPushMessage } from '@chainpipe/contracts';
import type { BatchHandler } from '@chainpipe/kafka';
import type { Clock } from '@chainpipe/runtime';
import { toV2Record } from '@chainpipe/tx-records';
import { envelope, txKey } from './protocol';
import type { ResendStore } from './resend-store';

/**
 * The WebSocket `transaction` frame of a push: the V2 record with `listenAddress` and
 * `is_reorg_resend` (schema `ws/tx/transaction-push`); an orphaned transaction also carries
 * `orphaned: true`. `id` is the push's message id, `time` when it was matched.
 */
export function transactionFrame(p: TxPushMessage): string {
  // A push always names the addresses it matched: `listenAddress` is never the query's null here.
  const data = { ...toV2Record(p.tx, p.is_reorg_resend, p.listen_address), listenAddress: p.listen_address, ...(p.orphaned ? { orphaned: true } : {}) };
  return JSON.stringify(envelope('transaction', p.message_id, 0, data, 'success', p.matched_at));
}

/**
 * tx.push.v1 → the resend store, under one group shared by every copy: its committed offsets
 * carry the pushes across restarts and rolls, so what is matched while no copy runs is stored
 * once one does. Storing a new push announces it on the fan-out stream, from which every copy
 * writes it to its own connections. A push already stored or acknowledged (a replay after a
 * crash) is not announced again; one older than the retention could never be re-sent and is
 * skipped.
 */
export function createPushHandler(deps: { store: ResendStore; retentionSeconds: number; clock: Pick<Clock, 'now'> }): BatchHandler<TxPushMessage> {
  return async (records) => {
    const oldest = deps.clock.now() - deps.retentionSeconds * 1000;
    for (const { value: p } of records) {
      if (!p.ws || p.matched_at < oldest) continue;
      await deps.store.record({
        appId: p.app_id,
        messageId: p.message_id,
        txKey: txKey(p.tx.chain_type, p.tx.chain_id, p.tx.tx_hash),
        chainType: p.tx.chain_type,
        listenAddress: p.listen_address,
        frame: transactionFrame(p),
        atMs: p.matched_at,
      });
    }
  };
}
