import { expect } from 'chai';
import type { NormalizedTx } from '@chainpipe/contracts';
import { otherPaymentTo, paidTo, verifyDeposit } from '../src';

const DEPOSIT = '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706';
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';

function tx(over: Partial<NormalizedTx>): NormalizedTx {
  return {
    chain_type: 'ethereum', chain_id: 1, height: 1, block_hash: '0xb', tx_time: 1, tx_hash: '0xh', tx_index: 0, tx_version: null,
    sender: '0x1111111111111111111111111111111111111111', receiver: null, fee_payer: null, transfer_type: 'native', amount: '0', symbol: 'ETH',
    decimals: 18, tx_status: 'success', tx_fee: '0', gas_limit: null, gas_used: null, gas_price: null, max_fee_per_gas: null,
    max_priority_fee_per_gas: null, nonce: null, method_id: null, method_call: null, l1_origin_hash: null,
    token_transfers: [], from_details: [], to_details: [], internal_transactions: [],
    ...over,
  } as NormalizedTx;
}

const transfer = (to: string, amount: string, contract = USDT, tokenId: string | null = null) => ({
  from_address: '0x1111111111111111111111111111111111111111', to_address: to, token_contract_address: contract, symbol: 'USDT', amount, token_id: tokenId,
  from_token_address: null, to_token_address: null, mint: null, program_id: null, standard: 'erc20', log_index: 0,
});

describe('deposit amount of a pushed transaction', () => {
  const eth = { isNative: true, contractAddress: null, family: 'evm' as const };
  const usdt = { isNative: false, contractAddress: USDT, family: 'evm' as const };

  it('native coin: the top-level value to the address, and internal transfers to it (EVM, any case)', () => {
    expect(paidTo(tx({ receiver: DEPOSIT.toUpperCase().replace('0X', '0x'), amount: '1000' }), DEPOSIT, eth)).to.equal(1000n);
    const internal = { from_address: '0x2222222222222222222222222222222222222222', to_address: DEPOSIT, amount: '5', tx_status: 'success' as const, program_id: null, instruction: 'call', description: null, instr_index: 0, depth: 1 };
    expect(paidTo(tx({ receiver: '0x2222222222222222222222222222222222222222', amount: '7', internal_transactions: [internal, { ...internal, tx_status: 'failed' }] }), DEPOSIT, eth)).to.equal(5n);
  });

  it('a token: its transfers of that contract to the address only (not the coin value, not NFTs)', () => {
    const t = tx({ receiver: USDT, amount: '0', transfer_type: 'token', token_transfers: [transfer(DEPOSIT, '2500000'), transfer(DEPOSIT, '1', '0x0000000000000000000000000000000000000001'), transfer('0x3333333333333333333333333333333333333333', '9'), transfer(DEPOSIT, '7', USDT, '7')] as never });
    expect(paidTo(t, DEPOSIT, usdt)).to.equal(2_500_000n);
    expect(paidTo(t, DEPOSIT, eth)).to.equal(0n);
  });

  it('bitcoin: the outputs to the address', () => {
    const btc = { isNative: true, contractAddress: null, family: 'utxo' as const };
    const address = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    const out = (a: string, v: string) => ({ address: a, amount: v, vout_index: '0', is_contract: false });
    expect(paidTo(tx({ chain_type: 'bitcoin', to_details: [out(address, '30000'), out('1BoatSLRHtKNngkdXEeobR76b53LETtpyT', '5'), out(address, '1')] }), address, btc)).to.equal(30_001n);
  });

  it('solana: case matters and the instructions that repeat the transfer are not counted twice', () => {
    const sol = { isNative: true, contractAddress: null, family: 'svm' as const };
    const to = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    const repeat = { from_address: 'x', to_address: to, amount: '50', tx_status: 'success' as const, program_id: '11111111111111111111111111111111', instruction: 'transfer', description: null, instr_index: 0, depth: 1 };
    expect(paidTo(tx({ chain_type: 'solana', receiver: to, amount: '50', internal_transactions: [repeat] }), to, sol)).to.equal(50n);
    expect(paidTo(tx({ chain_type: 'solana', receiver: to.toLowerCase(), amount: '50' }), to, sol)).to.equal(0n);
  });

  it('nothing is paid by a pending or failed transaction', () => {
    expect(paidTo(tx({ receiver: DEPOSIT, amount: '1000', tx_status: 'pending' }), DEPOSIT, eth)).to.equal(0n);
    expect(paidTo(tx({ receiver: DEPOSIT, amount: '1000', tx_status: 'failed' }), DEPOSIT, eth)).to.equal(0n);
  });

  it('another asset paid to the address is named: a token to a native order, the coin or another token to a token order; nothing for the source token itself', () => {
    const eth = { isNative: true, contractAddress: null, family: 'evm' as const };
    const usdt = { isNative: false, contractAddress: USDT, family: 'evm' as const };
    const usdc = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
    const tokenTx = tx({ token_transfers: [{ token_contract_address: usdc, from_address: '0x1111111111111111111111111111111111111111', to_address: DEPOSIT, amount: '500', token_id: null } as never] });
    expect(otherPaymentTo(tokenTx, DEPOSIT, eth)).to.deep.equal({ asset: usdc, amount: 500n });
    expect(verifyDeposit({ found: true, tx: tokenTx }, DEPOSIT, eth, false)).to.deep.equal({ kind: 'not_paid', status: 'success', other: { asset: usdc, amount: 500n } });
    expect(otherPaymentTo(tx({ receiver: DEPOSIT, amount: '7' }), DEPOSIT, usdt)).to.deep.equal({ asset: 'native', amount: 7n });
    expect(otherPaymentTo(tokenTx, DEPOSIT, usdt)).to.deep.equal({ asset: usdc, amount: 500n });
    const usdtTx = tx({ token_transfers: [{ token_contract_address: USDT, from_address: '0x1111111111111111111111111111111111111111', to_address: DEPOSIT, amount: '9', token_id: null } as never] });
    expect(otherPaymentTo(usdtTx, DEPOSIT, usdt), 'the source token is no other asset').to.equal(undefined);
    expect(otherPaymentTo({ ...tokenTx, tx_status: 'failed' }, DEPOSIT, eth), 'a failed transaction pays nothing').to.equal(undefined);
  });
});
