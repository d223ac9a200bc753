import { networkByName } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { expect } from 'chai';
import { parseEvmPayload } from '../src/evm';
import type { ChainContext, NormalizedTx, ParseResult } from '../src/types';

// Expected values are read from the raw fixtures (test/fixtures/chain/evm, see SOURCES.md) either
// as literals with a comment saying where they are, or by the small independent walks below.

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
// keccak256 of "Deposit(address,uint256)", "Withdrawal(address,uint256)" (WETH9) and ERC-1155's
// "TransferSingle(address,address,address,uint256,uint256)" / "TransferBatch(…,uint256[],uint256[])".
const DEPOSIT_TOPIC = '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c';
const WITHDRAWAL_TOPIC = '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65';
const TRANSFER_SINGLE_TOPIC = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
const TRANSFER_BATCH_TOPIC = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const VALUE_OPCODES = ['CALL', 'CALLCODE', 'CREATE', 'CREATE2', 'SELFDESTRUCT'];

/** A fixture's JSON-RPC `result` (files are either full envelopes or just the result). */
function fixture(name: string): any {
  const raw = readFixtureJson(`evm/${name}`);
  return raw && typeof raw === 'object' && 'jsonrpc' in raw ? raw.result : raw;
}

function ctxFor(network: string): ChainContext {
  const n = networkByName(network);
  if (!n) throw new Error(`unknown network ${network}`);
  return { chainType: n.chainType, chainId: n.chainId, family: n.family, nativeSymbol: n.nativeSymbol, nativeDecimals: n.nativeDecimals };
}

const ETH = ctxFor('ethereum-mainnet');
// Base Goerli (84531) is not one of the service's networks; same native coin as Base.
const BASE_GOERLI: ChainContext = { chainType: 'base', chainId: 84531, family: 'evm', nativeSymbol: 'ETH', nativeDecimals: 18 };

const big = (hex: string): bigint => BigInt(hex);
const dec = (hex: string): string => BigInt(hex).toString();

function onlyBlock(res: ParseResult): NormalizedTx[] {
  expect(res.blocks).to.have.length(1);
  return res.blocks[0].transactions;
}

function byHash(txs: NormalizedTx[]): Map<string, NormalizedTx> {
  return new Map(txs.map((t) => [t.tx_hash, t]));
}

function transferLogs(receipt: any, topicCount: number): any[] {
  return (receipt.logs ?? []).filter((l: any) => l.topics?.[0] === TRANSFER_TOPIC && l.topics.length === topicCount);
}

/** WETH9 Deposit / Withdrawal logs of a receipt (1 indexed address, wad in data). */
function wrapLogs(receipt: any): any[] {
  return (receipt.logs ?? []).filter((l: any) => l.address === WETH && [DEPOSIT_TOPIC, WITHDRAWAL_TOPIC].includes(l.topics?.[0]));
}

function erc1155Logs(receipt: any): any[] {
  return (receipt.logs ?? []).filter((l: any) => [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC].includes(l.topics?.[0]));
}

/** Nested (depth ≥ 1) callTracer frames of `types` with value > 0; optionally without reverted subtrees. */
function valueFrames(frame: any, types: string[], skipReverted: boolean): any[] {
  const out: any[] = [];
  const visit = (f: any, depth: number, reverted: boolean): void => {
    const r = reverted || Boolean(f.error);
    if (depth > 0 && types.includes(f.type) && BigInt(f.value ?? '0x0') > 0n && !(skipReverted && r)) out.push(f);
    for (const c of f.calls ?? []) visit(c, depth + 1, r);
  };
  visit(frame, 0, false);
  return out;
}

describe('parseEvmPayload — eth-mainnet 17053184 (block + receipts + callTracer)', () => {
  const block = fixture('eth-mainnet-17053184.block_fulltx.json');
  const receipts: any[] = fixture('eth-mainnet-17053184.receipts.json');
  const traces: any[] = fixture('eth-mainnet-17053184.debug_trace_callTracer.json');
  const res = parseEvmPayload([{ block, receipts, traces }], { ...ETH, dataset: 'block_with_receipts_debug_trace' });
  const all = onlyBlock(res);
  // The block's transactions come first, in block order; its 16 beacon withdrawals follow
  // (evm-transfer-kinds.test.ts checks those).
  const txs = all.slice(0, block.transactions.length);
  const records = byHash(txs);
  const failedHashes = receipts.filter((r) => r.status === '0x0').map((r) => r.transactionHash);

  it('returns the block reference from the header', () => {
    expect(res.issues).to.deep.equal([]);
    expect(res.blocks[0].block).to.deep.equal({
      height: 17053184, // number 0x1043600
      hash: '0x79ffaa2840f06eee8f41c61670b132382a988612b25b9a7deca0bea0691db491',
      parent_hash: '0x9b0703bdc0ba555c61161ae096a526c34299c6d71bc9fc7cb56970e46600eb87',
      time: 0x643abdab, // timestamp
    });
  });

  it('emits all 125 transactions in block order with their index', () => {
    expect(txs.map((t) => t.tx_hash)).to.deep.equal(block.transactions.map((t: any) => t.hash));
    expect(txs.map((t) => t.tx_index)).to.deep.equal(block.transactions.map((t: any) => Number(t.transactionIndex)));
    for (const t of txs) {
      expect(t.chain_type).to.equal('ethereum');
      expect(t.chain_id).to.equal(1);
      expect(t.height).to.equal(17053184);
      expect(t.tx_time).to.equal(0x643abdab);
    }
  });

  it('marks exactly the 4 status-0x0 receipts failed and drops their transfers', () => {
    expect(failedHashes).to.have.length(4); // SOURCES.md: 4 failed txs
    expect(txs.filter((t) => t.tx_status === 'failed').map((t) => t.tx_hash)).to.have.members(failedHashes);
    expect(txs.filter((t) => t.tx_status === 'success')).to.have.length(121);
    for (const h of failedHashes) {
      const t = records.get(h)!;
      expect(t.token_transfers).to.deep.equal([]);
      expect(t.internal_transactions).to.deep.equal([]);
    }
  });

  it('decodes ERC-20 (3 topics) and ERC-721 (4 topics) Transfer logs', () => {
    const erc20 = receipts.flatMap((r) => (r.status === '0x1' ? transferLogs(r, 3) : []));
    const erc721 = receipts.flatMap((r) => (r.status === '0x1' ? transferLogs(r, 4) : []));
    const wraps = receipts.flatMap((r) => (r.status === '0x1' ? wrapLogs(r) : []));
    expect(erc20).to.have.length(74); // SOURCES.md
    expect(erc721).to.have.length(13);
    expect(wraps).to.have.length(18); // 9 Deposit + 9 Withdrawal of WETH9, all in successful txs
    const all = txs.flatMap((t) => t.token_transfers);
    // WETH Deposit/Withdrawal are ERC-20 mints/burns of WETH: erc20 too
    expect(all.filter((x) => x.standard === 'erc20')).to.have.length(erc20.length + wraps.length);
    expect(all.filter((x) => x.standard === 'erc721')).to.have.length(erc721.length);

    // receipt #0 log 0: token 0x3c03b4ec…, 0x55aeb561… → 0xbf7045f6…, data 0x…5f8f5726107938720000
    const first = records.get(receipts[0].transactionHash)!.token_transfers[0];
    expect(first).to.include({
      from_address: '0x55aeb56136091e9dce99c91f4e2592fdb7c07ef2',
      to_address: '0xbf7045f6ea651abb04e96cba61adabe6d7bf0ee8',
      token_contract_address: '0x3c03b4ec9477809072ff9cc9292c9b25d4a8e6c6',
      amount: dec('0x5f8f5726107938720000'),
      standard: 'erc20',
      decimals: null,
      symbol: null,
      log_index: 0,
    });

    // every ERC-721 record carries topic3 as the token id
    for (const r of receipts) {
      const parsed = records.get(r.transactionHash)!.token_transfers.filter((x) => x.standard === 'erc721');
      expect(parsed.map((x) => x.amount)).to.deep.equal(transferLogs(r, 4).map((l) => dec(l.topics[3])));
      expect(parsed.map((x) => x.token_contract_address)).to.deep.equal(transferLogs(r, 4).map((l) => l.address));
    }
  });

  it('keeps nested value calls as internal transfers and leaves reverted ones out', () => {
    const all = traces.flatMap((t) => valueFrames(t, VALUE_OPCODES, false));
    const kept = traces.flatMap((t, i) => (receipts[i].status === '0x1' ? valueFrames(t, VALUE_OPCODES, true) : []));
    expect(all).to.have.length(50);
    expect(kept).to.have.length(48);
    const internals = txs.flatMap((t) => t.internal_transactions);
    expect(internals).to.have.length(kept.length);
    expect(internals.map((x) => x.amount)).to.have.members(kept.map((f) => dec(f.value)));
    expect(internals.every((x) => x.tx_status === 'success' && x.instruction === 'call' && x.depth! >= 1)).to.equal(true);
    // DELEGATECALL frames carry the parent's value (12 with value > 0 here) but move nothing
    expect(traces.flatMap((t) => valueFrames(t, ['DELEGATECALL'], false))).to.have.length(12);
  });

  it('computes fee fields from receipt and transaction', () => {
    receipts.forEach((r, i) => {
      const tx = block.transactions[i];
      const t = records.get(r.transactionHash)!;
      expect(t.tx_fee).to.equal((big(r.gasUsed) * big(r.effectiveGasPrice)).toString());
      expect(t.gas_used).to.equal(dec(r.gasUsed));
      expect(t.gas_price).to.equal(dec(r.effectiveGasPrice));
      expect(t.gas_limit).to.equal(dec(tx.gas));
      expect(t.nonce).to.equal(dec(tx.nonce));
      expect(t.tx_version).to.equal(Number(tx.type));
      expect(t.method_id).to.equal(tx.input.length >= 10 ? tx.input.slice(0, 10) : null);
      expect(t.sender).to.equal(tx.from);
      expect(t.receiver).to.equal(tx.to);
      expect(t.amount).to.equal(dec(tx.value));
      expect(t.symbol).to.equal('ETH');
      expect(t.decimals).to.equal(18);
    });
  });

  it('assigns transfer_type from status, token logs and value', () => {
    receipts.forEach((r, i) => {
      const tx = block.transactions[i];
      const tokenLogs = transferLogs(r, 3).length + transferLogs(r, 4).length + wrapLogs(r).length + erc1155Logs(r).length;
      const tokens = r.status === '0x1' && tokenLogs > 0;
      const expected = tokens ? 'token' : big(tx.value) > 0n ? 'native' : 'contract_call';
      expect(records.get(r.transactionHash)!.transfer_type, tx.hash).to.equal(expected);
    });
  });

  it('counts a top-level trace error as failure and drops everything below it (trace only, no receipts)', () => {
    // tx #113: top CALL "execution reverted" with a child CALL of 0x470de4df820000 to WETH
    const onlyTraces = onlyBlock(parseEvmPayload([{ block, traces }], ETH));
    const t113 = onlyTraces[113];
    expect(t113.tx_hash).to.equal(block.transactions[113].hash);
    expect(t113.tx_status).to.equal('failed');
    expect(t113.internal_transactions).to.deep.equal([]);
    // Derived input: the same frame tree without the top-level error, so the child now counts.
    const { error: _removed, ...succeeded } = traces[113];
    const withoutError = traces.map((t, i) => (i === 113 ? succeeded : t));
    const t113ok = onlyBlock(parseEvmPayload([{ block, traces: withoutError }], ETH))[113];
    expect(t113ok.tx_status).to.equal('success');
    expect(t113ok.internal_transactions).to.have.length(1);
    expect(t113ok.internal_transactions[0]).to.include({
      from_address: '0xef1c6e67703c7bd7107eed8303fbe6ec2554bf6b',
      to_address: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
      amount: dec('0x470de4df820000'),
      depth: 1,
      instr_index: 1,
    });
  });

  it('is deterministic', () => {
    const again = parseEvmPayload([{ block, receipts, traces }], { ...ETH, dataset: 'block_with_receipts_debug_trace' });
    expect(JSON.stringify(again)).to.equal(JSON.stringify(res));
  });
});

describe('parseEvmPayload — eth-mainnet 13998626 (EIP-1559)', () => {
  const block = fixture('eth-mainnet-13998626.block_fulltx.json');
  const receipts: any[] = fixture('eth-mainnet-13998626.receipts.json');
  const traces: any[] = fixture('eth-mainnet-13998626.debug_trace_callTracer.json');
  const txs = onlyBlock(parseEvmPayload([{ block, receipts, traces }], ETH));

  it('fills max fee fields for type-2 transactions only', () => {
    expect(txs).to.have.length(7);
    block.transactions.forEach((tx: any, i: number) => {
      const t = txs[i];
      if (tx.type === '0x2') {
        expect(t.tx_version).to.equal(2);
        expect(t.max_fee_per_gas).to.equal(dec(tx.maxFeePerGas));
        expect(t.max_priority_fee_per_gas).to.equal(dec(tx.maxPriorityFeePerGas));
      } else {
        expect(t.tx_version).to.equal(0);
        expect(t.max_fee_per_gas).to.equal(null);
        expect(t.max_priority_fee_per_gas).to.equal(null);
      }
      expect(t.gas_price).to.equal(dec(receipts[i].effectiveGasPrice));
    });
    // tx #1: maxFeePerGas 0x4eb25eb400, maxPriorityFeePerGas 0x77359400, input selector 0xa9059cbb
    expect(txs[1]).to.include({ max_fee_per_gas: '338000000000', max_priority_fee_per_gas: '2000000000', method_id: '0xa9059cbb' });
  });

  it('finds the 5 value-carrying nested calls, the 6 ERC-20 transfers and 2 WETH wraps', () => {
    const expected = traces.flatMap((t) => valueFrames(t, VALUE_OPCODES, true));
    expect(expected).to.have.length(5); // SOURCES.md
    expect(txs.flatMap((t) => t.internal_transactions).map((x) => x.amount)).to.deep.equal(expected.map((f) => dec(f.value)));
    expect(receipts.flatMap((r) => wrapLogs(r))).to.have.length(2);
    expect(txs.flatMap((t) => t.token_transfers)).to.have.length(6 + 2);
  });

  it('uses the legacy gasPrice × gasUsed fee for tx #0', () => {
    // tx #0: type 0x0, gasPrice 0x5625b7f400 (370 gwei), receipt gasUsed 0x5208
    expect(txs[0].tx_fee).to.equal((0x5208n * 0x5625b7f400n).toString());
    expect(txs[0].transfer_type).to.equal('native');
  });
});

describe('parseEvmPayload — eth-mainnet 483920 (pre-Byzantium)', () => {
  const block = fixture('eth-mainnet-483920.eth_getBlockByNumber_full.json');
  const receipts: any[] = fixture('eth-mainnet-483920.eth_getBlockReceipts.json');

  it('matches out-of-order receipts by hash and treats status-less receipts as success', () => {
    // receipts are listed with transactionIndex 0, 2, 3, 1 and all have status null
    expect(receipts.map((r) => r.transactionIndex)).to.deep.equal(['0x0', '0x2', '0x3', '0x1']);
    const res = parseEvmPayload([{ block, receipts }], { ...ETH, dataset: 'block_with_receipts' });
    expect(res.issues).to.deep.equal([]);
    const txs = onlyBlock(res);
    expect(txs.map((t) => t.tx_hash)).to.deep.equal(block.transactions.map((t: any) => t.hash));
    expect(txs.every((t) => t.tx_status === 'success')).to.equal(true);
    for (const r of receipts) {
      const t = byHash(txs).get(r.transactionHash)!;
      expect(t.tx_fee).to.equal((big(r.gasUsed) * big(r.effectiveGasPrice)).toString());
    }
    // tx #0 and #1 are ERC-20 transfer() calls: log data 0x186a0 and 0x30d40 on token 0xf4eced2f…
    expect(txs[0].token_transfers.map((x) => x.amount)).to.deep.equal(['100000']);
    expect(txs[1].token_transfers.map((x) => x.amount)).to.deep.equal(['200000']);
    expect(txs[1].token_transfers[0].token_contract_address).to.equal('0xf4eced2f682ce333f96f2d8966c613ded8fc95dd');
    expect(txs.map((t) => t.transfer_type)).to.deep.equal(['token', 'token', 'native', 'native']);
  });

  it('produces records from receipts alone, value unknown', () => {
    const res = parseEvmPayload([receipts], { ...ETH, dataset: 'receipts' });
    const txs = onlyBlock(res);
    expect(res.blocks[0].block).to.deep.equal({
      height: 483920,
      hash: '0x246edb4b351d93c27926f4649bcf6c24366e2a7c7c718dc9158eea20c03bc6ae',
      parent_hash: null,
      time: null,
    });
    // ordered by transactionIndex
    expect(txs.map((t) => t.tx_index)).to.deep.equal([0, 1, 2, 3]);
    for (const t of txs) {
      expect(t.amount).to.equal(null);
      expect(t.tx_status).to.equal('success');
    }
    expect(txs.map((t) => t.transfer_type)).to.deep.equal(['token', 'token', null, null]);
    expect(txs[0].token_transfers[0].from_address).to.equal('0x1b63142628311395ceafeea5667e7c9026c862ca'); // log topics[1]
  });
});

describe('parseEvmPayload — eth-mainnet 1755635 (block + receipt envelopes)', () => {
  it('unwraps JSON-RPC envelopes everywhere and decodes the 5e18 token transfer', () => {
    const res = parseEvmPayload(
      [
        {
          block: readFixtureJson('evm/eth-mainnet-1755635.eth_getBlockByNumber_full.json'),
          receipts: [
            readFixtureJson('evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x2e3dcd05.json'),
            readFixtureJson('evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x9a5437ec.json'),
          ],
        },
      ],
      ETH,
    );
    expect(res.issues).to.deep.equal([]);
    const [call, plain] = onlyBlock(res);
    expect(call.transfer_type).to.equal('token');
    expect(call.token_transfers).to.have.length(1);
    // receipt 0x2e3dcd05 log 0: token 0xbb9bc244…, amount 5e18
    expect(call.token_transfers[0]).to.include({
      token_contract_address: '0xbb9bc244d798123fde783fcc1c72d3bb8c189413',
      amount: '5000000000000000000',
    });
    // tx 0x9a5437ec: value 0x5a178a89b930e00, gasUsed 0x5208 × gasPrice 0x4a817c800
    expect(plain).to.include({ transfer_type: 'native', amount: dec('0x5a178a89b930e00'), method_id: null });
    expect(plain.tx_fee).to.equal((0x5208n * 0x4a817c800n).toString());
  });
});

describe('parseEvmPayload — trace_block vs debug_traceBlockByNumber callTracer', () => {
  /** Parity hashes in transaction order: the old-geth callTracer results carry no hash. */
  function parityHashes(parity: any[]): string[] {
    const seen = new Map<string, number>();
    for (const t of parity) if (t.transactionHash) seen.set(t.transactionHash, t.transactionPosition);
    return [...seen.entries()].sort((a, b) => a[1] - b[1]).map(([h]) => h);
  }

  function both(n: number): { parity: NormalizedTx[]; geth: NormalizedTx[]; parityRaw: any[]; gethRaw: any[] } {
    const parityRaw: any[] = fixture(`eth-mainnet-${n}.trace_block.json`);
    const gethRaw: any[] = fixture(`eth-mainnet-${n}.debug_traceBlockByNumber_callTracer.json`);
    const hashes = parityHashes(parityRaw);
    const withHashes = gethRaw.map((e, i) => ({ txHash: hashes[i], result: e.result }));
    const p = parseEvmPayload([parityRaw], { ...ETH, dataset: 'trace_blocks' });
    const g = parseEvmPayload([withHashes], { ...ETH, dataset: 'debug_traces', batchStartRange: n });
    expect(p.issues).to.deep.equal([]);
    expect(g.issues).to.deep.equal([]);
    return { parity: onlyBlock(p), geth: onlyBlock(g), parityRaw, gethRaw };
  }

  const comparable = (t: NormalizedTx) => ({
    tx_hash: t.tx_hash,
    tx_index: t.tx_index,
    sender: t.sender,
    receiver: t.receiver,
    amount: t.amount,
    tx_status: t.tx_status,
    transfer_type: t.transfer_type,
    internal_transactions: t.internal_transactions,
  });

  it('1000000: nested CALLCODE with value, same result from both tracers', () => {
    const { parity, geth } = both(1000000);
    expect(parity.map(comparable)).to.deep.equal(geth.map(comparable));
    expect(parity).to.have.length(2); // the block reward trace is not a transaction
    // trace_block entry traceAddress [0]: callcode 0x56bc75e2d63100000 from 0xc083e994… (to itself)
    expect(parity[0].internal_transactions).to.deep.equal([
      {
        from_address: '0xc083e9947cf02b8ffc7d3090ae9aea72df98fd47',
        to_address: '0xc083e9947cf02b8ffc7d3090ae9aea72df98fd47',
        amount: dec('0x56bc75e2d63100000'),
        tx_status: 'success',
        program_id: null,
        instruction: 'callcode',
        description: null,
        instr_index: 1,
        depth: 1,
      },
    ]);
    expect(parity[0]).to.include({ sender: '0x39fa8c5f2793459d6622857e7d9fbb4bd91766d3', amount: dec('0x56bc75e2d63100000') });
  });

  it('1000690: CREATE transaction, same result from both tracers', () => {
    const { parity, geth } = both(1000690);
    expect(parity.map(comparable)).to.deep.equal(geth.map(comparable));
    // trace_block tx position 1: create, result.address 0xa7e3cf95…
    expect(parity[1]).to.include({ transfer_type: 'contract_creation', receiver: '0xa7e3cf952ea8d9438a26ee346c295f1ada328ae1' });
    expect(parity[0]).to.include({ transfer_type: 'native', amount: dec('0x3814695e26625c000') });
  });

  it('1000895: top-level out-of-gas is a failed transaction, same result from both tracers', () => {
    const { parity, geth } = both(1000895);
    expect(parity.map(comparable)).to.deep.equal(geth.map(comparable));
    // tx 0xa2f08948…: error "Out of gas" / "out of gas"; tx 0xc7fec96b…: plain value call
    expect(parity.map((t) => t.tx_status)).to.deep.equal(['failed', 'success']);
    expect(parity[0].tx_hash).to.equal('0xa2f089480e6fd907e786a88d928ba20feeca2ca37ffa84c2d54bae42f5d989c9');
  });

  it('1011973: Parity suicide moves 0.05 ETH; the old geth SELFDESTRUCT frame carries no amount', () => {
    const { parity, geth } = both(1011973);
    // trace_block entry type "suicide": address 0x474faa50…, refundAddress 0x83973747…, balance 0xb1a2bc2ec50000
    expect(parity[0].internal_transactions).to.have.length(1);
    expect(parity[0].internal_transactions[0]).to.include({
      from_address: '0x474faa5018639791952fae334e2911700ac7fe9b',
      to_address: '0x83973747eec131bf9a08ac64fb1a518e891bdf4b',
      amount: dec('0xb1a2bc2ec50000'),
      instruction: 'selfdestruct',
      depth: 1,
    });
    expect(dec('0xb1a2bc2ec50000')).to.equal('50000000000000000');
    // geth frame is `{type: "SELFDESTRUCT"}` only: no value, so no transfer can be claimed
    expect(geth[0].internal_transactions).to.deep.equal([]);
    expect(comparable({ ...geth[0], internal_transactions: [] })).to.deep.equal(comparable({ ...parity[0], internal_transactions: [] }));
  });

  it('508110: CREATE + value call, block and uncle rewards skipped', () => {
    const raw: any[] = fixture('eth-mainnet-508110.trace_block.json');
    const res = parseEvmPayload([raw], ETH);
    expect(res.issues).to.deep.equal([]);
    const txs = onlyBlock(res);
    const txHashes = new Set(raw.filter((t) => t.transactionHash).map((t) => t.transactionHash));
    expect(txs.map((t) => t.tx_hash)).to.have.members([...txHashes]);
    expect(raw.filter((t) => t.type === 'reward')).to.have.length(2);
    expect(txs.map((t) => t.transfer_type)).to.deep.equal(['contract_creation', 'native']);
    expect(res.blocks[0].block.height).to.equal(508110);
  });

  it('reports hash-less callTracer results that match nothing instead of inventing hashes', () => {
    const gethRaw = readFixtureJson('evm/eth-mainnet-1000000.debug_traceBlockByNumber_callTracer.json');
    const res = parseEvmPayload([gethRaw], { ...ETH, batchStartRange: 1000000 });
    expect(res.blocks.flatMap((b) => b.transactions)).to.deep.equal([]);
    expect(res.issues).to.have.length(2);
    expect(res.issues.every((i) => i.tx_hash === null && /trace/.test(i.reason))).to.equal(true);
  });
});

describe('parseEvmPayload — OP stack', () => {
  const block = fixture('base-goerli-1041847.block_fulltx.json');
  const receipts: any[] = fixture('base-goerli-1041847.receipts.json');
  const traces: any[] = fixture('base-goerli-1041847.debug_trace_callTracer.json');
  const res = parseEvmPayload([{ block, receipts, traces }], BASE_GOERLI);
  const txs = onlyBlock(res);

  it('base-goerli 1041847: L1-info deposit is a system transaction with its sourceHash', () => {
    expect(res.issues).to.deep.equal([]);
    expect(txs).to.have.length(50);
    const deposit = block.transactions[0]; // type 0x7e, isSystemTx true
    expect(txs[0]).to.include({
      tx_hash: deposit.hash,
      transfer_type: 'system',
      tx_version: 0x7e,
      l1_origin_hash: deposit.sourceHash,
      tx_fee: '0',
      sender: '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001',
      receiver: '0x4200000000000000000000000000000000000015',
    });
    expect(txs.slice(1).every((t) => t.transfer_type !== 'system' && t.l1_origin_hash === null)).to.equal(true);
  });

  it('adds the receipt l1Fee to the L2 execution fee', () => {
    const withL1Fee = receipts.filter((r) => r.l1Fee !== undefined);
    expect(withL1Fee).to.have.length(49);
    for (const r of withL1Fee) {
      const expected = big(r.gasUsed) * big(r.effectiveGasPrice) + big(r.l1Fee);
      expect(byHash(txs).get(r.transactionHash)!.tx_fee).to.equal(expected.toString());
    }
    // receipt #1: gasUsed 0xe798 × 0x77359400 + l1Fee 0x5df20224a124
    expect(txs[1].tx_fee).to.equal((0xe798n * 0x77359400n + 0x5df20224a124n).toString());
  });

  it('does not count the 47 DELEGATECALL frames that repeat the parent value', () => {
    expect(traces.flatMap((t) => valueFrames(t, ['DELEGATECALL'], false))).to.have.length(47);
    const expected = traces.flatMap((t) => valueFrames(t, VALUE_OPCODES, true));
    expect(txs.flatMap((t) => t.internal_transactions)).to.have.length(expected.length);
  });

  it('op-mainnet L1-info deposit transaction (eth_getTransactionByHash) alone', () => {
    const tx = fixture('op-mainnet-127446283.eth_getTransactionByHash_l1info-deposit_0xbc9329af.json');
    const t = onlyBlock(parseEvmPayload([tx], ctxFor('optimism-mainnet')))[0];
    // no isSystemTx field (post-Regolith): recognized by 0xdead…0001 → 0x4200…0015
    expect(tx.isSystemTx).to.equal(undefined);
    expect(t).to.include({
      transfer_type: 'system',
      l1_origin_hash: '0x04e9a69416471ead93b02f0c279ab11ca0b635db5c1726a56faf22623bafde52',
      method_id: '0x440a5e20',
      tx_version: 126,
      height: 0x798ad0b,
      amount: '0',
      nonce: dec('0x152ea95'),
    });
  });

  it('op-mainnet deposit receipt alone', () => {
    const r = fixture('op-mainnet-114290569.eth_getTransactionReceipt_l1info-deposit_0xb7c74afd.json');
    const t = onlyBlock(parseEvmPayload([[r]], { ...ctxFor('optimism-mainnet'), dataset: 'receipts' }))[0];
    expect(t).to.include({ transfer_type: 'system', tx_fee: '0', gas_used: dec('0xfa0d'), tx_status: 'success', amount: null });
  });

  it('records the ETH a user deposit mints as an internal "mint" entry (derived input)', () => {
    // Derived from the op-mainnet deposit: a user deposit with mint 1 ETH from another sender.
    const tx = {
      ...fixture('op-mainnet-127446283.eth_getTransactionByHash_l1info-deposit_0xbc9329af.json'),
      from: '0x1111111111111111111111111111111111111111',
      mint: '0xde0b6b3a7640000',
    };
    const t = onlyBlock(parseEvmPayload([tx], ctxFor('optimism-mainnet')))[0];
    expect(t.transfer_type).to.equal('contract_call');
    expect(t.internal_transactions).to.deep.equal([
      {
        from_address: null,
        to_address: '0x1111111111111111111111111111111111111111',
        amount: '1000000000000000000',
        tx_status: 'success',
        program_id: null,
        instruction: 'mint',
        description: 'OP-stack deposit: ETH minted on L2 to the sender and not passed on as the deposit value',
        instr_index: null,
        depth: 0,
      },
    ]);
  });
});

describe('parseEvmPayload — Arbitrum, BSC, Polygon', () => {
  it('arbitrum-one 18413839: fee is gasUsed × effectiveGasPrice, gasUsedForL1 already included', () => {
    const block = fixture('arbitrum-one-18413839.block_fulltx.json');
    const receipt = fixture('arbitrum-one-18413839.eth_getTransactionReceipt_0xbb26d13b.json');
    const t = onlyBlock(parseEvmPayload([{ block, receipts: [receipt] }], ctxFor('arbitrum-mainnet')))[0];
    expect(t.tx_fee).to.equal((big(receipt.gasUsed) * big(receipt.effectiveGasPrice)).toString());
    expect(t.gas_used).to.equal(dec('0xa816d'));
    expect(t.tx_version).to.equal(0x78);
    expect(t.transfer_type).to.equal('token');
    expect(t.amount).to.equal(dec('0x1b7a5f826f460000'));
    expect(t.token_transfers).to.have.length(transferLogs(receipt, 3).length);
    expect(t.token_transfers).to.have.length(4); // SOURCES.md: 4 ERC-20 Transfer logs
  });

  it('bsc-testnet 11832497: BEP-20 transfer of 1386e18 and the validator deposit system tx', () => {
    const res = parseEvmPayload(
      [
        {
          block: readFixtureJson('evm/bsc-testnet-11832497.eth_getBlockByHash_full.json'),
          receipts: [
            readFixtureJson('evm/bsc-testnet-11832497.eth_getTransactionReceipt_bep20-transfer_0x4c4c66c0.json'),
            readFixtureJson('evm/bsc-testnet-11832497.eth_getTransactionReceipt_validator-deposit_0xac14bda8.json'),
          ],
        },
      ],
      ctxFor('bsc-testnet'),
    );
    expect(res.issues).to.deep.equal([]);
    const txs = onlyBlock(res);
    expect(txs).to.have.length(8);
    // tx #5: token 0x483c7fc7…, data 0x4b229d28a843680000; fee = gasUsed 0x23671 × tx gasPrice 0x2540be400
    expect(txs[5].token_transfers).to.have.length(1);
    expect(txs[5].token_transfers[0]).to.include({
      token_contract_address: '0x483c7fc7a3f1e7a7f8e96d3fe198125b00cf5e99',
      amount: (1386n * 10n ** 18n).toString(),
      to_address: '0x5a7459999a5f6a8e5fa79d326583e0d334c65e1d',
    });
    expect(txs[5].tx_fee).to.equal((0x23671n * 0x2540be400n).toString());
    // tx #7: miner 0x7a1a4ad9… → ValidatorSet 0x…1000 at gasPrice 0, value 0x20c4634b5e0400
    expect(txs[7]).to.include({ transfer_type: 'system', amount: dec('0x20c4634b5e0400'), tx_fee: '0', symbol: 'BNB' });
    // tx #0: 0.01 BNB value; no receipt given, nothing says it failed
    expect(txs[0]).to.include({ transfer_type: 'native', amount: '10000000000000000', tx_status: 'success', tx_fee: null });
  });

  it('polygon-pos bor state-sync receipt: system, WETH minted from the zero address', () => {
    const r = fixture('polygon-pos-34155965.bor_state-sync_receipt_0xd9273904.json');
    const t = onlyBlock(parseEvmPayload([r], ctxFor('polygon-mainnet')))[0];
    expect(t).to.include({ transfer_type: 'system', tx_fee: '0', tx_hash: r.transactionHash, symbol: 'POL' });
    // log 0: WETH 0x7ceb23fd…, topics[1] zero address, data 0x49b803db16e000
    expect(t.token_transfers).to.have.length(1);
    expect(t.token_transfers[0]).to.include({
      from_address: '0x0000000000000000000000000000000000000000',
      to_address: '0xbc850334dd4a52a8d4306e78da404271290561de',
      token_contract_address: '0x7ceb23fd6bc0add59e62ac25578270cff1b9f619',
      amount: dec('0x49b803db16e000'),
    });
  });
});

describe('parseEvmPayload — shapes and issues', () => {
  const block = fixture('eth-mainnet-1755635.eth_getBlockByNumber_full.json');

  it('accepts a bare block with full transactions (dataset "block")', () => {
    const res = parseEvmPayload([block], { ...ETH, dataset: 'block' });
    const txs = onlyBlock(res);
    expect(txs.map((t) => t.tx_hash)).to.deep.equal(block.transactions.map((t: any) => t.hash));
    // no receipt: included in a block and nothing says otherwise
    expect(txs.every((t) => t.tx_status === 'success' && t.tx_fee === null && t.gas_used === null)).to.equal(true);
  });

  it('reports a hash-only block per transaction but keeps its block reference', () => {
    const hashOnly = { ...block, transactions: block.transactions.map((t: any) => t.hash) };
    const res = parseEvmPayload([hashOnly], ETH);
    expect(res.blocks).to.have.length(1);
    expect(res.blocks[0].transactions).to.deep.equal([]);
    expect(res.blocks[0].block.height).to.equal(0x1ac9f3);
    expect(res.issues.map((i) => i.tx_hash)).to.deep.equal(block.transactions.map((t: any) => t.hash));
  });

  it('keeps parsing the other elements when one is broken', () => {
    const res = parseEvmPayload([null, 42, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'header not found' } }, block], ETH);
    expect(res.blocks).to.have.length(1);
    expect(res.issues.map((i) => i.block_index)).to.deep.equal([0, 1, 2]);
    expect(res.issues[2].reason).to.contain('header not found');
  });

  it('turns a malformed transaction into an issue and parses the rest of the block', () => {
    const broken = { ...block, transactions: [{ ...block.transactions[0], hash: 12 }, block.transactions[1]] };
    const res = parseEvmPayload([broken], ETH);
    expect(onlyBlock(res).map((t) => t.tx_hash)).to.deep.equal([block.transactions[1].hash]);
    expect(res.issues).to.have.length(1);
    expect(res.issues[0]).to.include({ block_index: 0, tx_index: 0 });
  });

  it('does not throw on a non-array payload', () => {
    const res = parseEvmPayload({} as unknown as unknown[], ETH);
    expect(res.blocks).to.deep.equal([]);
    expect(res.issues).to.have.length(1);
  });
});
