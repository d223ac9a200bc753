import { randomInt } from 'node:crypto';
import { evmBlockItem, randomSuffix, rebaseBlock, streamerBody } from '@chainpipe/testing';

/**
 * The real eth-mainnet block 17053184 (with receipts and callTracer traces) under a fresh height
 * and fresh hashes, whose transaction 29 (a plain ETH transfer: no input, no logs, a lone CALL
 * frame) pays `amountWei` to `to` instead: the recipient is replaced wherever the block, the
 * receipt and the trace name it, and the value in the transaction and its frame.
 */
const TX_INDEX = 29;
const RECIPIENT = '0x3b4d167069c8190923f705e60f5cfca94d4f29f7';

export function evmBlockPaying(to: string, amountWei: bigint): { body: string; txHash: string; height: number } {
  const height = 3_000_000_000 + randomInt(1_000_000_000);
  const { item } = rebaseBlock('evm', evmBlockItem(), height, randomSuffix());
  const tx = item.block.transactions[TX_INDEX];
  if (tx.to.toLowerCase() !== RECIPIENT || tx.input !== '0x') throw new Error('fixture transaction 29 is not the plain transfer this helper expects');
  const value = '0x' + amountWei.toString(16);
  tx.to = to;
  tx.value = value;
  item.receipts[TX_INDEX].to = to;
  item.traces[TX_INDEX].to = to;
  item.traces[TX_INDEX].value = value;
  return { body: streamerBody([item], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: height }), txHash: tx.hash, height };
}
