import { createHash } from 'node:crypto';
import type { ChainTxMessage, TxPushMessage } from '@chainpipe/contracts';
import type { OutgoingMessage } from '@chainpipe/kafka';
import { txParties, type NormalizedTx } from '@chainpipe/tx-parsers';
import type { AddressIndex } from './address-index';
import type { AppSwitches } from '@chainpipe/tx-store';

/**
 * From stored transactions to pushes. Pure.
 *
 * The parties of a transaction are exactly the addresses the history index stores for it
 * (`addressIndexEntries`: sender, receiver, fee payer, token transfer parties and Solana token
 * accounts, internal transfer parties, Bitcoin inputs and outputs), in the same canonical form,
 * so whatever a search finds for an address is also what its application is pushed.
 */

/** Delivery switches of an application when its transaction is matched. */
export interface AppDelivery {
  ws: boolean;
  webhook: boolean;
}

/** A tx.app_configs row's switches, or undefined for an application without configuration. */
export type { AppSwitches };

/**
 * The channels a push goes to. An application without configuration has the table's defaults
 * (migration 20261121010000: WebSocket on, webhook off, active).
 */
export function deliveryOf(s: AppSwitches | undefined): AppDelivery {
  if (!s) return { ws: true, webhook: false };
  const on = s.is_active && s.app_active;
  return { ws: on && s.enable_ws, webhook: on && s.enable_webhook && Boolean(s.webhook_url) };
}

/** The canonical parties of a transaction (also what chain-parser names in `earlier_parties`). */
export const partiesOf = txParties;

/**
 * Deterministic message id: the same application, transaction, block, status and flags always
 * give the same id, so a replay after a crash is recognisable downstream. The status is part of
 * it because a status change is a new push (docs/decisions.md#d13: receivers deduplicate on it too).
 */
export function messageId(appId: string, tx: NormalizedTx, isReorgResend: boolean, orphaned: boolean): string {
  const parts = [appId, tx.chain_type, String(tx.chain_id), tx.tx_hash, tx.block_hash ?? '', tx.tx_status ?? '', isReorgResend ? 'r' : '', orphaned ? 'o' : ''];
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

export interface Match {
  appId: string;
  listenAddress: string[];
  record: ChainTxMessage;
}

/**
 * Every (application, transaction) pair of the records that is a push, in record order. The one
 * place both channels (WebSocket and webhook) get their rule from (docs/decisions.md#d13: a transaction is
 * pushed when first seen and again when its status changes): a record whose change kept its
 * status, block and flags (a merge that only added information, such as traces) carries
 * `earlier_parties`, and an application matching those was pushed this transaction already
 * under the same message id, so it is not pushed again; an application that matches only a
 * party the change added sees the transaction for the first time and is pushed.
 */
export function matchRecords(index: AddressIndex, records: readonly ChainTxMessage[]): Match[] {
  const out: Match[] = [];
  for (const record of records) {
    const matched = index.match(record.tx.chain_type, partiesOf(record.tx));
    const earlier = record.earlier_parties?.length ? index.match(record.tx.chain_type, record.earlier_parties) : undefined;
    for (const [appId, listenAddress] of matched) if (!earlier?.has(appId)) out.push({ appId, listenAddress, record });
  }
  return out;
}

/** The tx.push.v1 messages of the matches (keyed by app_id, TOPICS.txPush.key); muted applications get none. */
export function pushMessages(matches: readonly Match[], delivery: (appId: string) => AppDelivery, now: number): OutgoingMessage<TxPushMessage>[] {
  const out: OutgoingMessage<TxPushMessage>[] = [];
  for (const m of matches) {
    const d = delivery(m.appId);
    if (!d.ws && !d.webhook) continue;
    const orphaned = m.record.orphaned ?? false;
    out.push({
      value: {
        message_id: messageId(m.appId, m.record.tx, m.record.is_reorg_resend, orphaned),
        app_id: m.appId,
        tx_id: m.record.id,
        network: m.record.network,
        listen_address: m.listenAddress,
        is_reorg_resend: m.record.is_reorg_resend,
        orphaned,
        ws: d.ws,
        webhook: d.webhook,
        matched_at: now,
        tx: m.record.tx,
      },
    });
  }
  return out;
}

/** Key of a registered pool: `chain_type:chain_id:address` (address in stored form). */
export const poolKey = (chainType: string, chainId: number, address: string) => `${chainType}:${chainId}:${address}`;

/** The registered pools a transaction touches (as any party), each once. */
export function poolsTouched(pools: ReadonlySet<string>, tx: NormalizedTx): string[] {
  if (pools.size === 0) return [];
  return partiesOf(tx).filter((a) => pools.has(poolKey(tx.chain_type, tx.chain_id, a)));
}
