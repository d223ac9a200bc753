import type { NormalizedTx } from '@chainpipe/tx-parsers';
import { toListRecord, toV2Record } from '@chainpipe/tx-records';

/**
 * Examples of the API document. The record is transaction 0x110f…e83b of ethereum-mainnet block
 * 17053184 (an ERC-20 transfer; test/fixtures/chain/evm/eth-mainnet-17053184.*) as the EVM parser
 * reads it; the response shapes come from the same formatters the routes use, and the contract
 * tests check every example against its schema.
 */
export const ERC20_TRANSFER: NormalizedTx = {
  chain_type: 'ethereum',
  chain_id: 1,
  height: 17053184,
  block_hash: '0x79ffaa2840f06eee8f41c61670b132382a988612b25b9a7deca0bea0691db491',
  tx_time: 1681571243,
  tx_hash: '0x110f17c45d4efa9c0a2bb69adcdc4c340685ae48c37b362c85e5bd1f62e9e83b',
  tx_index: 8,
  tx_version: 0,
  sender: '0xffec0067f5a79cff07527f63d83dd5462ccf8ba4',
  receiver: '0xb62132e35a6c13ee1ee0f84dc5d40bad8d815206',
  fee_payer: null,
  transfer_type: 'token',
  amount: '0',
  symbol: 'ETH',
  decimals: 18,
  tx_status: 'success',
  tx_fee: '3100407090000000',
  gas_limit: '200000',
  gas_used: '52487',
  gas_price: '59070000000',
  max_fee_per_gas: null,
  max_priority_fee_per_gas: null,
  nonce: '1330325',
  method_id: '0xa9059cbb',
  method_call: null,
  l1_origin_hash: null,
  token_transfers: [
    {
      from_address: '0xffec0067f5a79cff07527f63d83dd5462ccf8ba4',
      to_address: '0xb030b9e06f9f57ae72c5d44329e88eb12dc87276',
      token_contract_address: '0xb62132e35a6c13ee1ee0f84dc5d40bad8d815206',
      symbol: null,
      amount: '515063556230000000000',
      token_id: null,
      from_token_address: null,
      to_token_address: null,
      mint: null,
      program_id: null,
      decimals: null,
      is_from_contract: false,
      is_to_contract: false,
      standard: 'erc20',
      log_index: 47
    }
  ],
  from_details: [],
  to_details: [],
  internal_transactions: []
};

export const EXAMPLE_LIST = [toListRecord({ id: '48213', is_reorg_resend: false, record: ERC20_TRANSFER })];
export const EXAMPLE_V2 = toV2Record(ERC20_TRANSFER, false);
export const EXAMPLE_ADDRESS = ERC20_TRANSFER.sender as string;
