import { encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { tronBase58ToEvmHex } from '@chainpipe/chains';

/**
 * Calldata of the token's `transfer(to, amount)`: a plain token payment from a deposit address.
 * A Tron recipient (`T…`) is its 20-byte account in the ABI, as TRC-20 contracts read it.
 */
export function transferCalldata(to: string, amount: bigint): Hex {
  const account = to.startsWith('T') ? tronBase58ToEvmHex(to) : to;
  if (!account) throw new Error(`${to} is not a Tron address`);
  return encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [account as Hex, amount] });
}
