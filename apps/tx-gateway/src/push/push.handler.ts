import type { TxPushMessage } from '@chainpipe/contracts';
import type { BatchHandler } from '@chainpipe/kafka';
import { toV2Record } from '@chainpipe/tx-records';
import { envelope, txKey } from './protocol';
import type { ResendStore } from './resend-store';
import type { WsHub } from './ws-hub';

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
 * tx.push.v1 → the resend store (shared by every copy) → this copy's connections. Each copy
 * consumes with a group of its own. A push already acknowledged is not sent again (a replay
 * after a crash); one stored by another copy is still delivered here, to this copy's clients.
 */
export function createPushHandler(deps: { store: ResendStore; hub: WsHub }): BatchHandler<TxPushMessage> {
  return async (records) => {
    for (const { value: p } of records) {
      if (!p.ws) continue;
      const frame = transactionFrame(p);
      const outcome = await deps.store.record(p.app_id, p.message_id, txKey(p.tx.chain_type, p.tx.chain_id, p.tx.tx_hash), frame, p.matched_at);
      if (outcome === 'acked') continue;
      deps.hub.deliver(p.app_id, frame, p.tx.chain_type, p.listen_address, p.message_id);
    }
  };
}
