import type { ChainTxMessage } from '@chainpipe/contracts';
import type { NormalizedTx } from '@chainpipe/tx-parsers';
import type { StoredTx } from './store';

/**
 * The chain.tx.v1 message of a stored transaction, as everyone that changes a stored record
 * publishes it (chain-parser for streamed blocks, pending-compensator for status changes).
 */

/** Kafka key of a transaction: every message about one transaction lands on one partition, in order. */
export function chainTxKey(tx: Pick<NormalizedTx, 'chain_type' | 'chain_id' | 'tx_hash'>): string {
  return `${tx.chain_type}:${tx.chain_id}:${tx.tx_hash}`;
}

export function chainTxMessage(s: StoredTx): { key: string; value: ChainTxMessage } {
  return { key: chainTxKey(s.tx), value: { id: s.id, network: s.network, is_reorg_resend: s.is_reorg_resend, orphaned: s.orphaned, tx: s.tx } };
}
