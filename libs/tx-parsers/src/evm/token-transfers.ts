import { tokenTransfer } from '../record-base';
import type { TokenTransfer } from '../types';
import { address, firstWord, hash32, isObject, safeInt, topicAddress } from './hex';

type Json = any;

/** keccak256("Transfer(address,address,uint256)"), shared by ERC-20 and ERC-721. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** keccak256("TransferSingle(address,address,address,uint256,uint256)") of ERC-1155. */
export const TRANSFER_SINGLE_TOPIC = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
/** keccak256("TransferBatch(address,address,address,uint256[],uint256[])") of ERC-1155. */
export const TRANSFER_BATCH_TOPIC = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';
/** keccak256("Deposit(address,uint256)") of WETH9 and its copies (WBNB, WPOL…). */
export const WRAP_DEPOSIT_TOPIC = '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c';
/** keccak256("Withdrawal(address,uint256)") of WETH9 and its copies. */
export const WRAP_WITHDRAWAL_TOPIC = '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65';

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** A batch is bounded by the log's own data; this only caps work on a hostile length word. */
const MAX_BATCH_PAIRS = 10_000;

/**
 * Token transfers of one receipt's logs:
 * - `Transfer`: ERC-20 puts the amount in data (3 topics), ERC-721 indexes the token id as a 4th
 *   topic (amount = token id, as before; `token_id` says it too);
 * - ERC-1155 `TransferSingle` / `TransferBatch`: one transfer per (id, value) pair with
 *   `token_id` and `amount`; the operator (topic 1) is not a party;
 * - `Deposit(dst, wad)` / `Withdrawal(src, wad)` of the chain's wrapped native contract
 *   (`wrappedNative`): a mint from / burn to the zero address, as explorers show them (the same
 *   event names of other contracts mean other things and are ignored).
 * Logs that do not decode (other topic counts, short data, non-address topics) and logs flagged
 * `removed` (reorged out) are skipped: a contract is free to emit anything under these topics.
 */
export function tokenTransfersFromLogs(logs: unknown, wrappedNative: ReadonlySet<string>): TokenTransfer[] {
  if (!Array.isArray(logs)) return [];
  const out: TokenTransfer[] = [];
  for (let i = 0; i < logs.length; i++) {
    const log: Json = logs[i];
    if (!isObject(log) || log.removed === true) continue;
    const topics = log.topics;
    if (!Array.isArray(topics)) continue;
    const topic0 = hash32(topics[0]);
    if (topic0 === null) continue;
    const contract = address(log.address);
    if (contract === null) continue;
    const logIndex = safeInt(log.logIndex) ?? i;
    switch (topic0) {
      case TRANSFER_TOPIC:
        pushIfSome(out, decodeTransfer(topics, log.data, contract, logIndex));
        break;
      case TRANSFER_SINGLE_TOPIC:
        pushIfSome(out, decodeTransferSingle(topics, log.data, contract, logIndex));
        break;
      case TRANSFER_BATCH_TOPIC:
        out.push(...decodeTransferBatch(topics, log.data, contract, logIndex));
        break;
      case WRAP_DEPOSIT_TOPIC:
      case WRAP_WITHDRAWAL_TOPIC:
        if (wrappedNative.has(contract)) pushIfSome(out, decodeWrap(topic0, topics, log.data, contract, logIndex));
        break;
      default:
    }
  }
  return out;
}

function pushIfSome(out: TokenTransfer[], t: TokenTransfer | null): void {
  if (t !== null) out.push(t);
}

function decodeTransfer(topics: unknown[], data: unknown, contract: string, logIndex: number): TokenTransfer | null {
  const from = topicAddress(topics[1]);
  const to = topicAddress(topics[2]);
  if (from === null || to === null) return null;
  if (topics.length === 3) {
    const amount = firstWord(data);
    if (amount === null) return null;
    return tokenTransfer({ from_address: from, to_address: to, token_contract_address: contract, amount: amount.toString(), standard: 'erc20', log_index: logIndex });
  }
  if (topics.length === 4) {
    const id = hash32(topics[3]);
    if (id === null) return null;
    const tokenId = BigInt(id).toString();
    return tokenTransfer({ from_address: from, to_address: to, token_contract_address: contract, amount: tokenId, token_id: tokenId, standard: 'erc721', log_index: logIndex });
  }
  return null;
}

/** TransferSingle(operator indexed, from indexed, to indexed, id, value). */
function decodeTransferSingle(topics: unknown[], data: unknown, contract: string, logIndex: number): TokenTransfer | null {
  if (topics.length !== 4) return null;
  const from = topicAddress(topics[2]);
  const to = topicAddress(topics[3]);
  const words = dataWords(data);
  if (from === null || to === null || words === null || words.length < 2) return null;
  return erc1155(from, to, contract, words[0], words[1], logIndex);
}

/**
 * TransferBatch(operator indexed, from indexed, to indexed, ids[], values[]): data holds two
 * offsets, then each array as a length word followed by its elements. Arrays of different
 * lengths or pointing outside the data make the whole log undecodable.
 */
function decodeTransferBatch(topics: unknown[], data: unknown, contract: string, logIndex: number): TokenTransfer[] {
  if (topics.length !== 4) return [];
  const from = topicAddress(topics[2]);
  const to = topicAddress(topics[3]);
  const words = dataWords(data);
  if (from === null || to === null || words === null || words.length < 2) return [];
  const ids = abiArray(words, words[0]);
  const values = abiArray(words, words[1]);
  if (ids === null || values === null || ids.length !== values.length) return [];
  return ids.map((id, k) => erc1155(from, to, contract, id, values[k], logIndex));
}

function erc1155(from: string, to: string, contract: string, id: bigint, value: bigint, logIndex: number): TokenTransfer {
  return tokenTransfer({
    from_address: from,
    to_address: to,
    token_contract_address: contract,
    amount: value.toString(),
    token_id: id.toString(),
    standard: 'erc1155',
    log_index: logIndex,
  });
}

/** Deposit(dst indexed, wad) mints to dst; Withdrawal(src indexed, wad) burns from src. */
function decodeWrap(topic0: string, topics: unknown[], data: unknown, contract: string, logIndex: number): TokenTransfer | null {
  if (topics.length !== 2) return null;
  const party = topicAddress(topics[1]);
  const wad = firstWord(data);
  if (party === null || wad === null) return null;
  const deposit = topic0 === WRAP_DEPOSIT_TOPIC;
  return tokenTransfer({
    from_address: deposit ? ZERO_ADDRESS : party,
    to_address: deposit ? party : ZERO_ADDRESS,
    token_contract_address: contract,
    amount: wad.toString(),
    standard: 'erc20',
    log_index: logIndex,
  });
}

const DATA = /^0x(?:[0-9a-fA-F]{64})*$/;
/** Long enough for any batch that fits a block; beyond it the log is not decoded. */
const MAX_DATA_CHARS = 2 + 64 * (2 * MAX_BATCH_PAIRS + 4);

/** ABI data as 32-byte words; null when it is not whole words of hex. */
function dataWords(data: unknown): bigint[] | null {
  if (typeof data !== 'string' || data.length > MAX_DATA_CHARS || !DATA.test(data)) return null;
  const words: bigint[] = [];
  for (let p = 2; p < data.length; p += 64) words.push(BigInt('0x' + data.slice(p, p + 64)));
  return words;
}

/** A dynamic uint256[] at byte offset `offset` of the data; null when out of bounds. */
function abiArray(words: bigint[], offset: bigint): bigint[] | null {
  if (offset % 32n !== 0n) return null;
  const at = offset / 32n;
  if (at >= BigInt(words.length)) return null;
  const length = words[Number(at)];
  const start = Number(at) + 1;
  if (length > BigInt(MAX_BATCH_PAIRS) || start + Number(length) > words.length) return null;
  return words.slice(start, start + Number(length));
}
