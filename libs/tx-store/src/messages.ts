import { chainTxKey, type ChainTxMessage } from '@chainpipe/contracts';
import type { StoredTx } from './store';

/**
 * The chain.tx.v1 message of a stored transaction, as everyone that changes a stored record
 * publishes it (chain-parser for streamed blocks, pending-compensator for status changes).
 */

/** The key is the topic's (TOPICS.chainTx.key); re-exported for the code that looks rows up by it. */
export { chainTxKey };

export function chainTxMessage(s: StoredTx): { value: ChainTxMessage } {
  return { value: { id: s.id, network: s.network, is_reorg_resend: s.is_reorg_resend, orphaned: s.orphaned, tx: s.tx } };
}
