import { encodeFunctionData, erc20Abi, type Hex } from 'viem';

/** Calldata of the token's `transfer(to, amount)`: a plain token payment from a deposit address. */
export function transferCalldata(to: string, amount: bigint): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as Hex, amount] });
}
