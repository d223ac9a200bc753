import { tokenTransfer } from '../record-base';
import type { TokenTransfer } from '../types';
import { address, firstWord, hash32, isObject, safeInt, topicAddress } from './hex';

/** keccak256("Transfer(address,address,uint256)"), shared by ERC-20 and ERC-721. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/**
 * Token transfers of one receipt's logs. ERC-20 puts the amount in data (3 topics), ERC-721
 * indexes the token id as a 4th topic. Logs that do not decode as either (other topic counts,
 * short data, non-address topics) and logs flagged `removed` (reorged out) are skipped: a
 * contract is free to emit anything under this topic.
 */
export function tokenTransfersFromLogs(logs: unknown): TokenTransfer[] {
  if (!Array.isArray(logs)) return [];
  const out: TokenTransfer[] = [];
  for (let i = 0; i < logs.length; i++) {
    const t = decodeTransferLog(logs[i], i);
    if (t) out.push(t);
  }
  return out;
}

function decodeTransferLog(log: unknown, position: number): TokenTransfer | null {
  if (!isObject(log) || log.removed === true) return null;
  const topics = log.topics;
  if (!Array.isArray(topics) || hash32(topics[0]) !== TRANSFER_TOPIC) return null;
  const contract = address(log.address);
  if (contract === null) return null;
  const from = topicAddress(topics[1]);
  const to = topicAddress(topics[2]);
  if (from === null || to === null) return null;

  let amount: bigint | null;
  let standard: string;
  if (topics.length === 3) {
    amount = firstWord(log.data);
    standard = 'erc20';
  } else if (topics.length === 4) {
    const id = hash32(topics[3]);
    amount = id === null ? null : BigInt(id);
    standard = 'erc721';
  } else {
    return null;
  }
  if (amount === null) return null;

  return tokenTransfer({
    from_address: from,
    to_address: to,
    token_contract_address: contract,
    amount: amount.toString(),
    standard,
    log_index: safeInt(log.logIndex) ?? position,
  });
}
