import { decodeFunctionData, encodeAbiParameters, encodeEventTopics, erc20Abi, type Hex } from 'viem';

/** A log as a receipt carries it (without its block and position fields). */
export interface SimLog {
  address: string;
  topics: Hex[];
  data: Hex;
}

/** The call a contract of the simulated chain is given. */
export interface ContractCall {
  from: string;
  to: string;
  value: bigint;
  input: Hex;
  timestampSec: number;
}

/** Token state a simulated contract may touch (balances move only when the whole call succeeds). */
export interface TokenState {
  balanceOf(token: string, holder: string): bigint;
  allowance(token: string, owner: string, spender: string): bigint;
  /** Moves `amount` of `token`; false when `from` holds less (nothing moved). */
  move(token: string, from: string, to: string, amount: bigint): boolean;
  setAllowance(token: string, owner: string, spender: string, amount: bigint): void;
}

/**
 * What a call did: reverted (with geth's reason), or its logs and where the native value it
 * carried ended up (`valueTo`, the callee unless the contract passed it on).
 */
export type CallEffect = { reverted: string } | { logs: SimLog[]; valueTo: string };

/** A contract of the simulated chain: its code, as a function of the call and the token state. */
export type SimContract = (call: ContractCall, tokens: TokenState) => CallEffect;

export function transferLog(token: string, from: string, to: string, amount: bigint): SimLog {
  return {
    address: token,
    topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: from as Hex, to: to as Hex } }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint256' }], [amount]),
  };
}

/**
 * An ERC-20 token at any address that is not a contract of its own: `transfer`, `approve` and
 * `transferFrom` as OpenZeppelin's ERC20 does them (balances and allowances checked, a revert
 * when short, `Transfer` and `Approval` logs). Any other input is a plain call (recorded, no effect).
 */
export function erc20Call(call: ContractCall, tokens: TokenState): CallEffect {
  let decoded: ReturnType<typeof decodeFunctionData<typeof erc20Abi>>;
  try {
    decoded = decodeFunctionData({ abi: erc20Abi, data: call.input });
  } catch {
    return { logs: [], valueTo: call.to };
  }
  const token = call.to;
  switch (decoded.functionName) {
    case 'transfer': {
      const [to, amount] = decoded.args;
      if (!tokens.move(token, call.from, to.toLowerCase(), amount)) return { reverted: 'ERC20: transfer amount exceeds balance' };
      return { logs: [transferLog(token, call.from, to.toLowerCase(), amount)], valueTo: call.to };
    }
    case 'approve': {
      const [spender, amount] = decoded.args;
      tokens.setAllowance(token, call.from, spender.toLowerCase(), amount);
      const topics = encodeEventTopics({ abi: erc20Abi, eventName: 'Approval', args: { owner: call.from as Hex, spender: spender as Hex } }) as Hex[];
      return { logs: [{ address: token, topics, data: encodeAbiParameters([{ type: 'uint256' }], [amount]) }], valueTo: call.to };
    }
    case 'transferFrom': {
      const [from, to, amount] = decoded.args;
      const owner = from.toLowerCase();
      const allowed = tokens.allowance(token, owner, call.from);
      if (allowed < amount) return { reverted: 'ERC20: insufficient allowance' };
      if (!tokens.move(token, owner, to.toLowerCase(), amount)) return { reverted: 'ERC20: transfer amount exceeds balance' };
      tokens.setAllowance(token, owner, call.from, allowed - amount);
      return { logs: [transferLog(token, owner, to.toLowerCase(), amount)], valueTo: call.to };
    }
    default:
      return { logs: [], valueTo: call.to };
  }
}
