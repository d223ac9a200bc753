import type { ChainContext, ParsedBlock, ParseIssue, ParseResult } from '../types';
import { assembleBlock, errorText } from './assemble-block';
import { evmChainRules } from './chain-specific';
import { detectShape } from './shape';

/**
 * Parses the per-block elements of an EVM streamer delivery (`data`, already unwrapped from
 * `{data, metadata}`) into normalized transaction records. Each element's shape is detected on
 * its own (full block, `{block, receipts, traces}`, receipts array, callTracer or Parity traces,
 * single receipt or transaction; JSON-RPC envelopes unwrapped), so `ctx.dataset` is not needed.
 * Never throws: a bad element or transaction becomes a ParseIssue.
 *
 * Sources of one transaction are joined by hash; hash-less callTracer results by position.
 * What each source contributes and the decisions where they are silent:
 * - block only: value, gas limit/prices, nonce, method id; status `success` (nothing says
 *   otherwise), no fee (gasUsed unknown), no token transfers (logs unknown);
 * - receipts only: status, fee, token transfers; amount null (value unknown), transfer_type null
 *   unless tokens moved, a contract was created or it is a system transaction;
 * - traces: internal value transfers (CALL/CALLCODE/CREATE/CREATE2/SELFDESTRUCT below the top
 *   frame, reverted subtrees excluded) and, without a receipt, the status;
 * - a failed transaction keeps its top-level amount but no token or internal transfers;
 * - beacon withdrawals (EIP-4895) become `system` records of their own (see withdrawals.ts);
 *   block/uncle rewards are not transactions and are not recorded;
 * - ERC-1155 and the wrapped native coin's Deposit/Withdrawal are token transfers, Polygon's
 *   LogTransfer/LogFeeTransfer internal transfers when no trace came (see token-transfers.ts,
 *   chain-specific.ts).
 */
export function parseEvmPayload(items: unknown[], ctx: ChainContext): ParseResult {
  const blocks: ParsedBlock[] = [];
  const issues: ParseIssue[] = [];
  if (!Array.isArray(items)) {
    issues.push({ block_index: 0, tx_hash: null, tx_index: null, reason: 'payload is not an array' });
    return { blocks, issues };
  }
  const rules = evmChainRules(ctx);
  for (let i = 0; i < items.length; i++) {
    try {
      const shape = detectShape(items[i]);
      if (!shape.ok) {
        issues.push({ block_index: i, tx_hash: null, tx_index: null, reason: shape.reason });
        continue;
      }
      const parsed = assembleBlock(ctx, rules, shape.bundle, i, issues);
      if (parsed) blocks.push(parsed);
    } catch (err) {
      issues.push({ block_index: i, tx_hash: null, tx_index: null, reason: `block not parsed: ${errorText(err)}` });
    }
  }
  return { blocks, issues };
}
