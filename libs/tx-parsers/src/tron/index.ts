import type { ChainContext, ParsedBlock, ParseIssue, ParseResult } from '../types';
import { parseBlockUnit, unitHeight, type BlockUnit } from './block-unit';
import type { JsonObject } from './json';
import { expandItem } from './payload-shapes';

interface Execution {
  blockIndex: number;
  height: number | null;
  info: JsonObject | null;
  receipt: JsonObject | null;
}

function issue(blockIndex: number, reason: string): ParseIssue {
  return { block_index: blockIndex, tx_hash: null, tx_index: null, reason };
}

/**
 * Groups payload elements into block units. Transaction infos / receipts delivered as their own
 * elements join the unit(s) of the same height; bare transactions are grouped by blockNumber.
 */
function buildUnits(items: unknown[], issues: ParseIssue[]): BlockUnit[] {
  const units: BlockUnit[] = [];
  const bareGroups = new Map<string, BlockUnit>();
  const executions: Execution[] = [];
  items.forEach((raw, blockIndex) => {
    for (const item of expandItem(raw)) {
      switch (item.kind) {
        case 'block':
          units.push({ blockIndex, native: item.native, evm: item.evm, bareTxs: null, infos: item.infos, receipts: item.receipts });
          break;
        case 'tx': {
          const key = String(item.tx.blockNumber ?? 'none');
          let unit = bareGroups.get(key);
          if (!unit) {
            unit = { blockIndex, native: null, evm: null, bareTxs: [], infos: [], receipts: [] };
            bareGroups.set(key, unit);
            units.push(unit);
          }
          unit.bareTxs?.push(item.tx);
          break;
        }
        case 'execution':
          executions.push({ blockIndex, ...item });
          break;
        case 'invalid':
          issues.push(issue(blockIndex, item.reason));
      }
    }
  });

  const byHeight = new Map<number, BlockUnit[]>();
  for (const unit of units) {
    const h = unitHeight(unit);
    if (h !== null) byHeight.set(h, [...(byHeight.get(h) ?? []), unit]);
  }
  for (const ex of executions) {
    const targets = ex.height === null ? undefined : byHeight.get(ex.height);
    if (!targets) {
      issues.push(issue(ex.blockIndex, 'transaction info / receipt without its block in the payload'));
      continue;
    }
    for (const unit of targets) {
      if (ex.info) unit.infos.push(ex.info);
      if (ex.receipt) unit.receipts.push(ex.receipt);
    }
  }
  return units;
}

/**
 * Parses a Tron streamer delivery (`data` elements) into normalized records. Accepts node-API
 * blocks (hex or Base58 addresses), blocks with gettransactioninfo objects, the composite
 * "Block with Receipts + Native Block" dataset, eth-view blocks with receipts, TronGrid
 * transaction lists, and JSON-RPC envelopes/batches of these. Never throws.
 *
 * Record conventions (shared by every shape, so the same transaction dedupes across views):
 * - `tx_hash` and `block_hash` are the node's ids: 64 lowercase hex, no `0x` (the eth view's
 *   `0x` + txID is stripped); `method_id` is `0x` + 4-byte selector, as on EVM chains.
 * - Addresses are Base58 `T…`; a value that is not a valid Tron address becomes null.
 * - Status: info `receipt.result` > eth receipt `status` > `ret[0].contractRet`; only SUCCESS
 *   succeeds. A failed transaction keeps its contract fields but has no token transfers.
 * - TRC-20 transfers come from info logs, else receipt logs; with neither (plain node block),
 *   `transfer`/`transferFrom` call data is decoded as a best effort (log_index null).
 * - Fee (sun): info `fee` (absent = 0), else receipt gasUsed × effectiveGasPrice (energy only),
 *   else TronGrid `ret[0].fee`, else null.
 * - System contracts (resource delegation, freezing, votes, account creation…) give a
 *   `contract_call` record with sender = owner and receiver = the counterparty when the contract
 *   has one, so both addresses' histories are complete.
 */
export function parseTronPayload(items: unknown[], ctx: ChainContext): ParseResult {
  const blocks: ParsedBlock[] = [];
  const issues: ParseIssue[] = [];
  if (!Array.isArray(items)) {
    issues.push(issue(0, 'payload is not an array'));
    return { blocks, issues };
  }
  let units: BlockUnit[];
  try {
    units = buildUnits(items, issues);
  } catch (err) {
    issues.push(issue(0, `payload classification error: ${String(err)}`));
    return { blocks, issues };
  }
  for (const unit of units) {
    try {
      const parsed = parseBlockUnit(unit, ctx);
      blocks.push(parsed.block);
      issues.push(...parsed.issues);
    } catch (err) {
      issues.push(issue(unit.blockIndex, `block parse error: ${String(err)}`));
    }
  }
  return { blocks, issues };
}
