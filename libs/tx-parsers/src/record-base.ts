import type { ChainContext, NormalizedTx, TokenTransfer } from './types';

/** The part of the chain context every record repeats. */
export type RecordChain = Pick<ChainContext, 'chainType' | 'chainId' | 'nativeSymbol' | 'nativeDecimals'>;

/**
 * A record of `txHash` on the context's chain with nothing else known yet: every field null or
 * empty, except `symbol`/`decimals`, which name the native coin (the top-level amount is always
 * the native unit; token amounts live in `token_transfers`). Families spread it and set what
 * their payload says; the key order is the record's serialized order.
 */
export function emptyTx(ctx: RecordChain, txHash: string): NormalizedTx {
  return {
    chain_type: ctx.chainType,
    chain_id: ctx.chainId,
    height: null,
    block_hash: null,
    tx_time: null,
    tx_hash: txHash,
    tx_index: null,
    tx_version: null,
    sender: null,
    receiver: null,
    fee_payer: null,
    transfer_type: null,
    amount: null,
    symbol: ctx.nativeSymbol,
    decimals: ctx.nativeDecimals,
    tx_status: null,
    tx_fee: null,
    gas_limit: null,
    gas_used: null,
    gas_price: null,
    max_fee_per_gas: null,
    max_priority_fee_per_gas: null,
    nonce: null,
    method_id: null,
    method_call: null,
    l1_origin_hash: null,
    token_transfers: [],
    from_details: [],
    to_details: [],
    internal_transactions: [],
  };
}

/** What every token transfer states; the rest defaults to unknown. */
export type TokenTransferCore = Pick<TokenTransfer, 'from_address' | 'to_address' | 'token_contract_address' | 'amount' | 'standard' | 'log_index'>;

/** Every field unknown, in the record's serialized order. */
const UNKNOWN_TRANSFER: TokenTransfer = {
  from_address: null,
  to_address: null,
  token_contract_address: null,
  symbol: null,
  amount: null,
  token_id: null,
  from_token_address: null,
  to_token_address: null,
  mint: null,
  program_id: null,
  decimals: null,
  is_from_contract: false,
  is_to_contract: false,
  standard: null,
  log_index: null,
};

/**
 * A token transfer with the given fields; the others null, and `is_from_contract` /
 * `is_to_contract` false: payloads do not say whether an account is a contract, only an account
 * lookup would.
 */
export function tokenTransfer(fields: TokenTransferCore & Partial<TokenTransfer>): TokenTransfer {
  return { ...UNKNOWN_TRANSFER, ...fields };
}
