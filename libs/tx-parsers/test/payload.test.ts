import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { addressIndexEntries, decodePayload, parseChainPayload, type NormalizedTx } from '@chainpipe/tx-parsers';
import { readFixtureBytes, readFixtureJson } from '@chainpipe/testing';

describe('streamer payload decoding', () => {
  it('unwraps {data, metadata} and reads metadata from the body before the headers', () => {
    const body = JSON.stringify({ data: [{ a: 1 }, { b: 2 }], metadata: { batch_start_range: 100, batch_end_range: 101, dataset: 'block', network: 'ethereum-mainnet', blocks_reorged: null } });
    const d = decodePayload(body, { 'batch-start-range': '5', 'batch-blocks-reorged': '[99]', 'stream-dataset': 'receipts' });
    expect(d.ok).to.equal(true);
    if (!d.ok) return;
    expect(d.items).to.deep.equal([{ a: 1 }, { b: 2 }]);
    expect(d.metadata).to.deep.equal({ batchStartRange: 100, batchEndRange: 101, blocksReorged: [99], dataset: 'block', network: 'ethereum-mainnet' });
  });

  it('takes a bare array or a single block, with metadata from headers', () => {
    const arr = decodePayload('[1,2]', { 'batch-start-range': '7', 'batch-blocks-reorged': '[]' });
    expect(arr).to.deep.include({ ok: true, items: [1, 2] });
    if (arr.ok) expect(arr.metadata.batchStartRange).to.equal(7);
    const one = decodePayload('{"number":"0x1"}');
    expect(one).to.deep.include({ ok: true, items: [{ number: '0x1' }] });
    const objects = decodePayload(JSON.stringify({ data: [], metadata: { blocks_reorged: [{ number: 12, hash: '0x' }, '13'] } }));
    if (objects.ok) expect(objects.metadata.blocksReorged).to.deep.equal([12, 13]);
  });

  it('says why it cannot read garbage, never throwing', () => {
    for (const body of ['not json', '', '"a string"', 'null', '42', '{"data":']) {
      const d = decodePayload(body);
      expect(d.ok, body).to.equal(false);
      if (!d.ok) expect(d.reason).to.be.a('string').and.not.equal('');
    }
  });

  it('dispatches a real block to its family parser', () => {
    const block = readFixtureJson('evm/eth-mainnet-483920.eth_getBlockByNumber_full.json').result;
    const r = parseChainPayload(JSON.stringify({ data: [block], metadata: { dataset: 'block' } }), networkByName('ethereum-mainnet')!);
    expect(r.ok).to.equal(true);
    if (!r.ok) return;
    expect(r.blocks).to.have.length(1);
    // Block 483920 holds 4 transactions (see SOURCES.md and the fixture's transactions array).
    expect(r.blocks[0].transactions.map((t) => t.tx_hash)).to.deep.equal(block.transactions.map((t: { hash: string }) => t.hash));
    expect(r.blocks[0].block.height).to.equal(parseInt(block.number, 16));
    const btc = parseChainPayload(readFixtureBytes('bitcoin/btc-mainnet-766390.getblock_verbosity2.json'), networkByName('bitcoin-mainnet')!);
    expect(btc.ok && btc.blocks[0].transactions.length).to.equal(16);
  });
});

describe('address index entries', () => {
  const base: NormalizedTx = {
    chain_type: 'ethereum', chain_id: 1, height: 1, block_hash: null, tx_time: 1, tx_hash: '0x1', tx_index: 0, tx_version: null,
    sender: '0xAAA', receiver: '0xBBB', fee_payer: null, transfer_type: 'token', amount: '0', symbol: 'ETH', decimals: 18, tx_status: 'success',
    tx_fee: null, gas_limit: null, gas_used: null, gas_price: null, max_fee_per_gas: null, max_priority_fee_per_gas: null, nonce: null,
    method_id: null, method_call: null, l1_origin_hash: null, from_details: [], to_details: [],
    token_transfers: [
      { from_address: '0xaaa', to_address: '0xCCC', token_contract_address: '0xT1', symbol: null, amount: '5', token_id: null, from_token_address: null, to_token_address: null, mint: null, program_id: null, decimals: null, is_from_contract: false, is_to_contract: false, standard: 'erc20', log_index: 0 },
    ],
    internal_transactions: [{ from_address: '0xBBB', to_address: '0xDDD', amount: '1', tx_status: 'success', program_id: null, instruction: 'call', description: null, instr_index: 1, depth: 1 }],
  };

  it('lists each involved address once, normalized, with the tokens it moved', () => {
    const entries = addressIndexEntries(base, 'evm');
    expect(entries).to.deep.equal([
      { address: '0xaaa', tokens: ['0xt1'] },
      { address: '0xbbb', tokens: [] },
      { address: '0xccc', tokens: ['0xt1'] },
      { address: '0xddd', tokens: [] },
    ]);
  });
});
