import { encodeFunctionData, erc20Abi, parseAbi, type Hex } from 'viem';

/**
 * THORChain's EVM router (v4, the `router` of /thorchain/inbound_addresses): a deposit names the
 * current vault, the asset (the zero address for the native coin), the amount, the memo and an
 * expiry after which the router refuses it (a quote's `expiry`: no deposit to a vault that may
 * have rotated).
 */
export const THORCHAIN_ROUTER_ABI = parseAbi(['function depositWithExpiry(address vault, address asset, uint256 amount, string memo, uint256 expiration) payable']);

/** Calldata of `router.depositWithExpiry(vault, asset, amount, memo, expiry)` for a token deposit. */
export function routerDepositCalldata(vault: string, token: string, amount: bigint, memo: string, expirySec: number): Hex {
  return encodeFunctionData({ abi: THORCHAIN_ROUTER_ABI, functionName: 'depositWithExpiry', args: [vault as Hex, token as Hex, amount, memo, BigInt(expirySec)] });
}

/** Calldata of the token's `approve(spender, amount)`: the router may take `amount` from the deposit address. */
export function approveCalldata(spender: string, amount: bigint): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender as Hex, amount] });
}
