import type { Knex } from '@chainpipe/db';
import { outputKey, resolveInputs, unresolvedPrevTxids, type KnownOutput } from '@chainpipe/tx-parsers';
import type { StoreBlockInput } from './store';

/** Previous transactions asked for in one query; a block's inputs rarely name more. */
const MAX_TXIDS_PER_QUERY = 5_000;

const OUTPUTS_SQL = `
  SELECT tx_hash, record->'to_details' AS outputs
    FROM tx.transactions
   WHERE chain_type = ? AND chain_id = ? AND tx_hash = ANY(?::text[]) AND orphaned = false`;

/**
 * Completes a Bitcoin block's inputs that name only the outpoint they spend (raw blocks, Core
 * verbosity 2) from the outputs of transactions already stored (and from earlier transactions
 * of the same block), so the fee and the sender become known where the data allows. Inputs
 * whose previous transaction is not stored stay unknown. Read-only; other families pass through.
 */
export async function resolveStoredInputs(db: Knex, input: StoreBlockInput): Promise<StoreBlockInput> {
  if (input.network.family !== 'utxo') return input;
  const txids = unresolvedPrevTxids(input.transactions);
  if (txids.length === 0) return input;
  const known = new Map<string, KnownOutput>();
  for (let i = 0; i < txids.length; i += MAX_TXIDS_PER_QUERY) {
    const { rows } = await db.raw(OUTPUTS_SQL, [input.network.chainType, input.network.chainId, txids.slice(i, i + MAX_TXIDS_PER_QUERY)]);
    for (const row of rows as { tx_hash: string; outputs: unknown }[]) {
      if (!Array.isArray(row.outputs)) continue;
      for (const o of row.outputs as { address?: unknown; amount?: unknown; vout_index?: unknown }[]) {
        if (typeof o?.vout_index !== 'string') continue;
        known.set(outputKey(row.tx_hash, o.vout_index), {
          address: typeof o.address === 'string' ? o.address : null,
          amount: typeof o.amount === 'string' ? o.amount : null,
        });
      }
    }
  }
  return { ...input, transactions: resolveInputs(input.transactions, known) };
}
