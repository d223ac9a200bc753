import { chainTxKey, type ChainTxMessage } from '@chainpipe/contracts';
import { txParties } from '@chainpipe/tx-parsers';
import type { PreviousTx, StoredTx } from './store';

/**
 * The chain.tx.v1 message of a stored transaction, as everyone that changes a stored record
 * publishes it (chain-parser for streamed blocks, pending-compensator for status changes), with
 * `previous`, the row as it was when the write changed a stored row.
 */

/** The key is the topic's (TOPICS.chainTx.key); re-exported for the code that looks rows up by it. */
export { chainTxKey };

export function chainTxMessage(s: StoredTx, previous?: PreviousTx): { value: ChainTxMessage } {
  const value: ChainTxMessage = { id: s.id, network: s.network, is_reorg_resend: s.is_reorg_resend, orphaned: s.orphaned, tx: s.tx };
  const earlier = earlierParties(s, previous);
  if (earlier) value.earlier_parties = earlier;
  return { value };
}

/**
 * The parties of the record as it was, when the write kept everything a push is told apart by
 * (status, block, reorg and orphan flags: tx-matcher's message id): the applications matching
 * them were pushed this very transaction before. Undefined for new rows and any other change.
 */
function earlierParties(s: StoredTx, p: PreviousTx | undefined): string[] | undefined {
  if (!p) return undefined;
  const same = (p.tx.tx_status ?? null) === (s.tx.tx_status ?? null) && (p.tx.block_hash ?? null) === (s.tx.block_hash ?? null) && p.is_reorg_resend === s.is_reorg_resend && p.orphaned === s.orphaned;
  return same ? txParties(p.tx) : undefined;
}
