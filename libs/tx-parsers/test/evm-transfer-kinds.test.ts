import { networkByName } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';
import { expect } from 'chai';
import { parseEvmPayload } from '../src/evm';
import { withdrawalRecordHash } from '../src/evm/withdrawals';
import type { ChainContext, NormalizedTx, ParseResult } from '../src/types';

// The value movements added for address monitoring III: ERC-1155, wrapped native coin
// Deposit/Withdrawal, EIP-4895 withdrawals, Polygon LogTransfer, OP-stack deposit mints.
// Expected values are read from the raw fixtures (test/fixtures/chain/evm, SOURCES.md), as
// literals with a comment naming where they are, or by independent walks over the raw logs.

const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const ZERO = '0x0000000000000000000000000000000000000000';
const DEPOSIT_TOPIC = '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c';
const WITHDRAWAL_TOPIC = '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65';
const TRANSFER_SINGLE_TOPIC = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
const TRANSFER_BATCH_TOPIC = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';

function fixture(name: string): any {
  const raw = readFixtureJson(`evm/${name}`);
  return raw && typeof raw === 'object' && 'jsonrpc' in raw ? raw.result : raw;
}

function ctxFor(network: string): ChainContext {
  const n = networkByName(network)!;
  return { chainType: n.chainType, chainId: n.chainId, family: n.family, nativeSymbol: n.nativeSymbol, nativeDecimals: n.nativeDecimals };
}

const ETH = ctxFor('ethereum-mainnet');
const POLYGON = ctxFor('polygon-mainnet');
const dec = (hex: string): string => BigInt(hex).toString();
const word = (n: bigint): string => n.toString(16).padStart(64, '0');

function onlyBlock(res: ParseResult): NormalizedTx[] {
  expect(res.blocks).to.have.length(1);
  return res.blocks[0].transactions;
}

describe('EVM transfer kinds — eth-mainnet 17053184', () => {
  const block = fixture('eth-mainnet-17053184.block_fulltx.json');
  const receipts: any[] = fixture('eth-mainnet-17053184.receipts.json');
  const traces: any[] = fixture('eth-mainnet-17053184.debug_trace_callTracer.json');
  const res = parseEvmPayload([{ block, receipts, traces }], ETH);
  const all = onlyBlock(res);
  const byHash = new Map(all.map((t) => [t.tx_hash, t]));

  it('records the one ERC-1155 TransferSingle: operator ignored, token id and amount from data', () => {
    const logs = receipts.flatMap((r) => r.logs.filter((l: any) => l.topics[0] === TRANSFER_SINGLE_TOPIC));
    expect(logs).to.have.length(1); // the only TransferSingle of the fixtures; no TransferBatch exists in them
    const log = logs[0];
    // log 0x82 of tx 0x6b313b51…: contract 0x495f9472… (OpenSea Shared Storefront),
    // topics: operator 0xa6040608…, from 0xec746f1c…, to 0x5444f2d8…;
    // data word 0 = id 0xec746f1c…d2f000000000000340000000001, word 1 = value 1.
    const parsed = byHash.get(log.transactionHash)!.token_transfers.filter((t) => t.standard === 'erc1155');
    expect(parsed).to.deep.equal([
      {
        from_address: '0xec746f1cd46b5d44f835c531f3443961f8de2d9f',
        to_address: '0x5444f2d8a68be0dafe38def6cdaa172c2d015a05',
        token_contract_address: '0x495f947276749ce646f68ac8c248420045cb7b5e',
        symbol: null,
        amount: '1',
        token_id: dec('0xec746f1cd46b5d44f835c531f3443961f8de2d9f000000000000340000000001'),
        from_token_address: null,
        to_token_address: null,
        mint: null,
        program_id: null,
        decimals: null,
        is_from_contract: false,
        is_to_contract: false,
        standard: 'erc1155',
        log_index: 0x82,
      },
    ]);
    expect(byHash.get(log.transactionHash)!.transfer_type).to.equal('token');
  });

  it('records every WETH Deposit as a mint from and every Withdrawal as a burn to the zero address', () => {
    const wraps = receipts.flatMap((r) => r.logs.filter((l: any) => l.address === WETH && [DEPOSIT_TOPIC, WITHDRAWAL_TOPIC].includes(l.topics[0])));
    expect(wraps).to.have.length(18);
    for (const log of wraps) {
      const party = '0x' + log.topics[1].slice(26);
      const deposit = log.topics[0] === DEPOSIT_TOPIC;
      const found = byHash.get(log.transactionHash)!.token_transfers.filter((t) => t.log_index === Number(log.logIndex));
      expect(found, log.transactionHash).to.have.length(1);
      expect(found[0]).to.include({
        from_address: deposit ? ZERO : party,
        to_address: deposit ? party : ZERO,
        token_contract_address: WETH,
        amount: dec(log.data),
        standard: 'erc20',
        token_id: null,
      });
    }
    // spot check: tx 0xe8f03257… log 0xd, Deposit dst 0x11111112…0582 (1inch router), wad 0x466ebb82ac1000
    const deposit = wraps.find((l) => l.logIndex === '0xd')!;
    expect(byHash.get(deposit.transactionHash)!.token_transfers.find((t) => t.log_index === 0xd)).to.include({
      from_address: ZERO,
      to_address: '0x1111111254eeb25477b68fb85ed929f73a960582',
      amount: dec('0x466ebb82ac1000'),
    });
  });

  it('ignores Deposit/Withdrawal events of contracts that are not the chain\'s wrapped native coin', () => {
    // Derived input: the block's receipts with every WETH log's address changed to another contract.
    const OTHER = '0x00000000000000000000000000000000000000aa';
    const moved = receipts.map((r) => ({ ...r, logs: r.logs.map((l: any) => (l.address === WETH ? { ...l, address: OTHER } : l)) }));
    const txs = onlyBlock(parseEvmPayload([{ block, receipts: moved, traces }], ETH));
    const fromWrapEvents = txs.flatMap((t) => t.token_transfers).filter((t) => t.token_contract_address === OTHER);
    // WETH's own Transfer logs (topic 0xddf252ad…) still decode as ERC-20; Deposit/Withdrawal do not
    const otherTransfers = moved.flatMap((r) => (r.status === '0x1' ? r.logs.filter((l: any) => l.address === OTHER && l.topics[0] === '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef') : []));
    expect(fromWrapEvents).to.have.length(otherTransfers.length);
  });

  describe('beacon withdrawals (EIP-4895)', () => {
    const records = all.slice(block.transactions.length);

    it('turns each of the 16 withdrawals into a system record crediting amount gwei as wei', () => {
      expect(block.withdrawals).to.have.length(16); // SOURCES.md
      expect(records).to.have.length(16);
      block.withdrawals.forEach((w: any, i: number) => {
        const t = records[i];
        expect(t).to.include({
          chain_type: 'ethereum',
          chain_id: 1,
          height: 17053184,
          block_hash: block.hash,
          tx_time: Number(block.timestamp),
          tx_index: null,
          sender: null,
          receiver: w.address,
          transfer_type: 'system',
          amount: (BigInt(w.amount) * 10n ** 9n).toString(),
          tx_status: 'success',
          tx_fee: '0',
          symbol: 'ETH',
        });
        expect(t.token_transfers).to.deep.equal([]);
        expect(t.internal_transactions).to.deep.equal([
          {
            from_address: null,
            to_address: w.address,
            amount: (BigInt(w.amount) * 10n ** 9n).toString(),
            tx_status: 'success',
            program_id: null,
            instruction: 'beacon_withdrawal',
            description: `EIP-4895 withdrawal ${BigInt(w.index)} of validator ${BigInt(w.validatorIndex)}`,
            instr_index: Number(w.index),
            depth: 0,
          },
        ]);
      });
      // withdrawal 0: index 0x4783d, validator 0x4e0d, 0xfbad624a…, 0x11d2460af gwei = 4,783,890,607 gwei
      expect(records[0].amount).to.equal('4783890607000000000');
    });

    it('names each record keccak256("chainpipe:eip4895-withdrawal:v1" ‖ block hash ‖ uint64 index)', () => {
      block.withdrawals.forEach((w: any, i: number) => {
        const preimage = Buffer.concat([
          Buffer.from('chainpipe:eip4895-withdrawal:v1'),
          Buffer.from(block.hash.slice(2), 'hex'),
          Buffer.from(BigInt(w.index).toString(16).padStart(16, '0'), 'hex'),
        ]);
        expect(records[i].tx_hash).to.equal('0x' + bytesToHex(keccak_256(preimage)));
      });
      expect(new Set(records.map((t) => t.tx_hash)).size).to.equal(16);
      // Indexes past 32 bits, up to the largest uint64, hash as the same big-endian bytes.
      for (const index of [2n ** 32n + 5n, 2n ** 64n - 1n]) {
        const preimage = Buffer.concat([Buffer.from('chainpipe:eip4895-withdrawal:v1'), Buffer.from(block.hash.slice(2), 'hex'), Buffer.from(index.toString(16).padStart(16, '0'), 'hex')]);
        expect(withdrawalRecordHash(block.hash, index)).to.equal('0x' + bytesToHex(keccak_256(preimage)));
      }
    });

    it('gives the same hashes on a replay and new ones in a block with another hash (reorg)', () => {
      const again = onlyBlock(parseEvmPayload([block], ETH)).slice(block.transactions.length);
      expect(again.map((t) => t.tx_hash)).to.deep.equal(records.map((t) => t.tx_hash));
      // Derived input: the same block under another hash, as a reorged copy would be.
      const reorged = { ...block, hash: '0x' + '11'.repeat(32) };
      const other = onlyBlock(parseEvmPayload([reorged], ETH)).slice(block.transactions.length);
      expect(other).to.have.length(16);
      expect(other.some((t) => records.some((r) => r.tx_hash === t.tx_hash))).to.equal(false);
    });

    it('reports withdrawals it cannot name and keeps the rest of the block', () => {
      // Derived input: the block header without its hash (and without its transactions, whose
      // blockHash would name it), and the block with a withdrawal without an address.
      const noHash = { ...block, hash: undefined, transactions: [] };
      const res1 = parseEvmPayload([noHash], ETH);
      expect(res1.blocks[0].transactions).to.deep.equal([]);
      expect(res1.issues.map((i) => i.reason)).to.deep.equal(['block has withdrawals but no hash: withdrawals not recorded']);
      const broken = { ...block, withdrawals: [{ ...block.withdrawals[0], address: 'nope' }, ...block.withdrawals.slice(1)] };
      const res2 = parseEvmPayload([broken], ETH);
      expect(onlyBlock(res2)).to.have.length(block.transactions.length + 15);
      expect(res2.issues).to.have.length(1);
    });
  });
});

describe('EVM transfer kinds — ERC-1155 TransferBatch (derived input)', () => {
  // No TransferBatch exists in the fixtures. Derived input: the real TransferSingle log of
  // eth-mainnet 17053184 (tx 0x6b313b51…, log 0x82) re-encoded as a TransferBatch with the same
  // topics and the ABI data of ids [id, id + 1] and values [1, 5]: offsets 0x40 and 0xa0, then
  // each array as its length and elements. Expected: one transfer per (id, value) pair.
  const receipts: any[] = fixture('eth-mainnet-17053184.receipts.json');
  const receipt = receipts.find((r) => r.logs.some((l: any) => l.topics[0] === TRANSFER_SINGLE_TOPIC));
  const single = receipt.logs.find((l: any) => l.topics[0] === TRANSFER_SINGLE_TOPIC);
  const id = BigInt('0x' + single.data.slice(2, 66));

  function withBatchData(data: string): any {
    const batch = { ...single, topics: [TRANSFER_BATCH_TOPIC, ...single.topics.slice(1)], data };
    return { ...receipt, logs: [batch] };
  }

  it('records one transfer per (id, value) pair', () => {
    const data = '0x' + [0x40n, 0xa0n, 2n, id, id + 1n, 2n, 1n, 5n].map(word).join('');
    const t = onlyBlock(parseEvmPayload([[withBatchData(data)]], ETH))[0];
    expect(t.token_transfers.map((x) => [x.token_id, x.amount, x.standard, x.from_address, x.to_address, x.log_index])).to.deep.equal([
      [id.toString(), '1', 'erc1155', '0xec746f1cd46b5d44f835c531f3443961f8de2d9f', '0x5444f2d8a68be0dafe38def6cdaa172c2d015a05', 0x82],
      [(id + 1n).toString(), '5', 'erc1155', '0xec746f1cd46b5d44f835c531f3443961f8de2d9f', '0x5444f2d8a68be0dafe38def6cdaa172c2d015a05', 0x82],
    ]);
  });

  it('skips a batch whose arrays differ in length or point outside the data', () => {
    const unequal = '0x' + [0x40n, 0xa0n, 2n, id, id + 1n, 1n, 1n].map(word).join('');
    const outside = '0x' + [0x40n, 0x400n, 1n, id].map(word).join('');
    for (const data of [unequal, outside, '0x12']) {
      const t = onlyBlock(parseEvmPayload([[withBatchData(data)]], ETH))[0];
      expect(t.token_transfers, data).to.deep.equal([]);
    }
  });
});

describe('EVM transfer kinds — Polygon LogTransfer (receipts without traces)', () => {
  // polygon-pos 34155965 state-sync receipt 0xd9273904…: log 0x8c of the POL contract 0x…1010,
  // topic0 0xe6497e3e… = LogTransfer(token, from, to, amount, input1, input2, output1, output2),
  // token 0x…1010, from 0x…1010, to 0xdc7da688…; data word 0 = amount 0x60100cb6f07791fee8.
  const receipt = fixture('polygon-pos-34155965.bor_state-sync_receipt_0xd9273904.json');
  const expected = {
    from_address: '0x0000000000000000000000000000000000001010',
    to_address: '0xdc7da6884ff2c90c713724e2baa6ab134983927d',
    amount: dec('0x60100cb6f07791fee8'),
    tx_status: 'success',
    program_id: '0x0000000000000000000000000000000000001010',
    instruction: 'log_transfer',
    description: 'Polygon LogTransfer: native POL moved',
    instr_index: 0x8c,
    depth: null,
  };

  it('records the POL deposit as an internal transfer when no trace came', () => {
    const t = onlyBlock(parseEvmPayload([[receipt]], { ...POLYGON, dataset: 'receipts' }))[0];
    expect(t.internal_transactions).to.deep.equal([expected]);
  });

  it('does not list it again when the transaction has a trace (the trace is the source then)', () => {
    // Derived input: a callTracer result for this hash with no nested calls.
    const trace = { txHash: receipt.transactionHash, result: { type: 'CALL', from: ZERO, to: ZERO, value: '0x0', gas: '0x0', gasUsed: '0x0', input: '0x' } };
    const t = onlyBlock(parseEvmPayload([{ receipts: [receipt], traces: [trace] }], POLYGON))[0];
    expect(t.internal_transactions).to.deep.equal([]);
  });

  it('does not repeat the transaction\'s own top-level value', () => {
    // Derived input: a transaction object for this hash whose own value is the logged move
    // (from 0x…1010 to 0xdc7da688…, value 0x60100cb6f07791fee8): that move is the record's top level.
    const tx = { hash: receipt.transactionHash, from: expected.from_address, to: expected.to_address, value: '0x60100cb6f07791fee8', nonce: '0x0', input: '0x', blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, transactionIndex: receipt.transactionIndex, gas: '0x0', gasPrice: '0x0' };
    const t = onlyBlock(parseEvmPayload([{ block: { number: receipt.blockNumber, hash: receipt.blockHash, parentHash: null, transactions: [tx] }, receipts: [receipt] }], POLYGON))[0];
    expect(t).to.include({ sender: expected.from_address, receiver: expected.to_address, amount: expected.amount });
    expect(t.internal_transactions).to.deep.equal([]);
  });

  it('is Polygon only', () => {
    const t = onlyBlock(parseEvmPayload([[receipt]], ETH))[0];
    expect(t.internal_transactions).to.deep.equal([]);
  });
});

describe('EVM transfer kinds — OP-stack deposit mint credited once (derived input)', () => {
  // No user deposit (mint > 0) exists in the fixtures (SOURCES.md). Derived input: the op-mainnet
  // L1-info deposit 0xbc9329af… with `from` and `to` set to one user address and `mint` and
  // `value` both 1 ETH (0xde0b6b3a7640000): a deposit of 1 ETH to oneself.
  const USER = '0x1111111111111111111111111111111111111111';
  const base = fixture('op-mainnet-127446283.eth_getTransactionByHash_l1info-deposit_0xbc9329af.json');
  const OP = ctxFor('optimism-mainnet');

  it('lists the deposit once: value as the top-level transfer, no extra mint credit', () => {
    const tx = { ...base, from: USER, to: USER, mint: '0xde0b6b3a7640000', value: '0xde0b6b3a7640000' };
    const t = onlyBlock(parseEvmPayload([tx], OP))[0];
    expect(t).to.include({ sender: USER, receiver: USER, amount: '1000000000000000000', transfer_type: 'native' });
    expect(t.internal_transactions).to.deep.equal([]);
  });

  it('lists only the part of the mint the deposit did not pass on', () => {
    // mint 1 ETH, value 0.25 ETH (0x3782dace9d90000): 0.75 ETH stays with the sender.
    const tx = { ...base, from: USER, to: '0x2222222222222222222222222222222222222222', mint: '0xde0b6b3a7640000', value: '0x3782dace9d90000' };
    const t = onlyBlock(parseEvmPayload([tx], OP))[0];
    expect(t.amount).to.equal('250000000000000000');
    expect(t.internal_transactions.map((i) => [i.instruction, i.to_address, i.amount])).to.deep.equal([['mint', USER, '750000000000000000']]);
  });

  it('keeps the whole mint for a reverted deposit (the value never moved)', () => {
    // Derived: the same self-deposit with a receipt of status 0x0 (the op-mainnet deposit receipt
    // 0xb7c74afd… with its hash replaced by this transaction's).
    const tx = { ...base, from: USER, to: USER, mint: '0xde0b6b3a7640000', value: '0xde0b6b3a7640000' };
    const receipt = { ...fixture('op-mainnet-114290569.eth_getTransactionReceipt_l1info-deposit_0xb7c74afd.json'), transactionHash: base.hash, status: '0x0' };
    const t = onlyBlock(parseEvmPayload([{ block: { number: base.blockNumber, hash: base.blockHash, parentHash: null, transactions: [tx] }, receipts: [receipt] }], OP))[0];
    expect(t.tx_status).to.equal('failed');
    expect(t.internal_transactions.map((i) => [i.instruction, i.to_address, i.amount])).to.deep.equal([['mint', USER, '1000000000000000000']]);
  });
});
