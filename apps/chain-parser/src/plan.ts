import { networkByName, type NetworkInfo } from '@chainpipe/chains';
import type { ChainFetchedMessage, ChainTxMessage } from '@chainpipe/contracts';
import type { OutgoingMessage } from '@chainpipe/kafka';
import type { ErrorCode } from '@chainpipe/runtime';
import { parseChainPayload, type NormalizedTx, type ParseIssue, type StreamMetadata } from '@chainpipe/tx-parsers';
import { NO_BLOCK, chainTxKey, chainTxMessage, type StoreBlockInput, type StoreBlockResult } from '@chainpipe/tx-store';

export { chainTxKey, chainTxMessage };

/**
 * Pure steps of the chain-parser: what one chain.raw.v1 record becomes (blocks to store, issues,
 * or a dead letter) and which chain.tx.v1 messages a stored block yields. No I/O here.
 */

/** Returns an error text when a record breaks the normalized-tx contract, else null. */
export type TxCheck = (tx: NormalizedTx) => string | null;

/** What the handler does with one consumed record: store its blocks, or dead-letter it. */
export type StorePlan =
  | { kind: 'dead'; code: ErrorCode; reason: string; network: string }
  | { kind: 'store'; network: NetworkInfo; blocks: StoreBlockInput[]; issues: ParseIssue[] };

/** The StorePlan of a chain.raw.v1 record, with the streamer's metadata. */
export type RecordPlan = Extract<StorePlan, { kind: 'dead' }> | (Extract<StorePlan, { kind: 'store' }> & { metadata: StreamMetadata });

/**
 * Parses one raw record. Dead letters: an unknown network, a body that is not a delivery at all
 * (not JSON, not blocks), and a delivery of which not a single block could be read (only issues:
 * nothing was stored, and the DLQ keeps it for a replay once the parser learns the shape).
 * Otherwise every readable block is stored; transactions that break the record contract are
 * dropped from their block and reported as issues like any other parse issue.
 */
export function planRecord(body: Buffer, headers: Record<string, string>, checkTx: TxCheck): RecordPlan {
  const network = networkByName(headers.network);
  if (!network) return { kind: 'dead', code: 'UNKNOWN_NETWORK', reason: `unknown network ${JSON.stringify(String(headers.network ?? '').slice(0, 64))}`, network: 'unknown' };
  const parsed = parseChainPayload(body, network, headers);
  if (!parsed.ok) return { kind: 'dead', code: 'UNPARSABLE', reason: parsed.reason, network: network.network };
  const issues = [...parsed.issues];
  if (parsed.blocks.length === 0 && issues.length > 0) {
    return { kind: 'dead', code: 'NO_BLOCKS', reason: `no block could be read: ${issues.slice(0, 3).map((i) => i.reason).join('; ')}`.slice(0, 1000), network: network.network };
  }
  const reorged = new Set(parsed.metadata.blocksReorged);
  const blocks = parsed.blocks.map((b, blockIndex): StoreBlockInput => {
    const transactions: NormalizedTx[] = [];
    for (const tx of b.transactions) {
      const problem = checkTx(tx);
      if (problem === null) transactions.push(tx);
      else issues.push({ block_index: blockIndex, tx_hash: tx.tx_hash ?? null, tx_index: tx.tx_index ?? null, reason: `record breaks its contract: ${problem}` });
    }
    return { network, block: b.block, transactions, reorged: b.block.height !== null && reorged.has(b.block.height) };
  });
  return { kind: 'store', network, metadata: parsed.metadata, blocks, issues };
}

/**
 * One chain.fetched.v1 record (a transaction a chain origin answered tx-gateway's look-up) as a
 * block-less delivery of that one transaction: storeBlock merges it into what is stored like any
 * delivery without a block (it never creates a block row or replaces a block from one
 * transaction), and its `changed` is published like a streamed block's. A message whose record
 * is not of the network it names is dead-lettered (storing it would fail on every retry).
 */
export function planFetched(m: ChainFetchedMessage): StorePlan {
  const network = networkByName(m.network);
  if (!network) return { kind: 'dead', code: 'UNKNOWN_NETWORK', reason: `unknown network ${JSON.stringify(String(m.network).slice(0, 64))}`, network: 'unknown' };
  const tx = m.tx as NormalizedTx;
  if (tx.chain_type !== network.chainType || tx.chain_id !== network.chainId) {
    return { kind: 'dead', code: 'NON_RETRYABLE', reason: `transaction of ${tx.chain_type}:${tx.chain_id} under network ${network.network}`, network: network.network };
  }
  return { kind: 'store', network, blocks: [{ network, block: NO_BLOCK, transactions: [tx] }], issues: [] };
}

/**
 * The transactions of the block whose stored form the delivery changed (a delivery of the same
 * block that adds nothing publishes nothing), then the ones it orphaned (orphaned: true).
 */
export function blockMessages(result: Pick<StoreBlockResult, 'changed' | 'orphaned' | 'previous'>): OutgoingMessage<ChainTxMessage>[] {
  return [...result.changed.map((s) => chainTxMessage(s, result.previous.get(s.id))), ...result.orphaned.map((s) => chainTxMessage(s))];
}

/** Names a raw record as a delivery for storeBlock's `source`: a replay of it has the same name. */
export function deliverySource(record: { topic: string; partition: number; offset: string }): string {
  return `${record.topic}:${record.partition}:${record.offset}`;
}

/** What a stored block was, for metrics and logs. */
export function blockOutcome(result: Pick<StoreBlockResult, 'replacedBlocks' | 'inserted'>): 'reorg' | 'new' | 'known' {
  if (result.replacedBlocks.length) return 'reorg';
  return result.inserted > 0 ? 'new' : 'known';
}
