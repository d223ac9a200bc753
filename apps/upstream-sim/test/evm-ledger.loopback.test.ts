import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pino from 'pino';
import { encodeFunctionData, erc20Abi, keccak256, parseEther, parseGwei, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { TEST_KEY_MNEMONIC } from '@chainpipe/testing';
import { BlockProducer } from '../src/chain-nodes/block-producer';
import { EvmLedger, FUNDED_BALANCE_WEI, GWEI, fundedAccounts } from '../src/chain-nodes/evm-ledger';
import { emptyEvmChain, evmNode } from '../src/chain-nodes/evm-node';
import { call, result } from './helpers';

const CHAIN_ID = 1;
const BASE_FEE = 2n * GWEI;
// Keys of the BIP39 test-vector mnemonic: the first account is funded, the second is not.
const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 0 });
const unfunded = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 1 });
const RECIPIENT = '0x1111111111111111111111111111111111111111';

function freshChain(head = 100) {
  const chain = emptyEvmChain();
  chain.head = head;
  const ledger = new EvmLedger(chain, { network: 'ethereum-mainnet', chainId: CHAIN_ID, baseFeeWei: BASE_FEE, funded: fundedAccounts(payer.address) });
  return { chain, ledger, rpc: evmNode(chain, { network: 'ethereum-mainnet', chainId: CHAIN_ID, traces: true, clientVersion: 'test', ledger }) };
}

const transfer = (nonce: number, value: bigint, extra: Record<string, unknown> = {}) =>
  payer.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to: RECIPIENT, value, nonce, gas: 21_000n, maxFeePerGas: parseGwei('10'), maxPriorityFeePerGas: parseGwei('1'), ...extra } as never);

describe('EVM chain that takes signed transactions', () => {
  it('accepts a signed transfer into the pool: its hash back, the pending nonce counts it, nothing mined yet', async () => {
    const { rpc } = freshChain();
    const raw = await transfer(0, parseEther('1.5'));
    expect(BigInt(result(rpc, 'eth_getBalance', [payer.address, 'latest']))).to.equal(FUNDED_BALANCE_WEI);

    const hash = result(rpc, 'eth_sendRawTransaction', [raw]);
    expect(hash).to.equal(keccak256(raw));
    expect(result(rpc, 'eth_getTransactionCount', [payer.address, 'pending'])).to.equal('0x1');
    expect(result(rpc, 'eth_getTransactionCount', [payer.address, 'latest'])).to.equal('0x0');
    expect(result(rpc, 'eth_getTransactionByHash', [hash]), 'not mined yet').to.equal(null);
  });

  it('serves the produced block, its transaction and receipt through the read methods', async () => {
    const { rpc, ledger } = freshChain(100);
    const value = parseEther('1.5');
    const raw = await transfer(0, value);
    const hash = result(rpc, 'eth_sendRawTransaction', [raw]);
    const produced = ledger.produceBlock(1_700_000_000);
    expect(produced.number).to.equal(101);

    const block = result(rpc, 'eth_getBlockByNumber', ['latest', true]);
    expect(block.number).to.equal('0x65');
    expect(block.timestamp).to.equal('0x6553f100');
    expect(block.transactions).to.have.length(1);
    const tx = block.transactions[0];
    expect(tx).to.include({ hash, from: payer.address.toLowerCase(), to: RECIPIENT, value: `0x${value.toString(16)}`, nonce: '0x0', type: '0x2', blockHash: block.hash });
    // Effective price: base fee 2 gwei + tip 1 gwei, under the 10 gwei cap.
    const price = BASE_FEE + GWEI;
    const receipt = result(rpc, 'eth_getTransactionReceipt', [hash]);
    expect(receipt).to.include({ status: '0x1', gasUsed: '0x5208', transactionHash: hash, blockHash: block.hash, effectiveGasPrice: `0x${price.toString(16)}` });
    expect(result(rpc, 'eth_getBlockReceipts', ['latest'])).to.deep.equal([receipt]);
    expect(result(rpc, 'eth_getBlockByHash', [block.hash, false]).transactions).to.deep.equal([hash]);

    // the recipient held nothing before: an address nobody paid is empty, as on a real chain
    expect(BigInt(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest']))).to.equal(value);
    expect(BigInt(result(rpc, 'eth_getBalance', [payer.address, 'latest']))).to.equal(FUNDED_BALANCE_WEI - value - 21_000n * price);
    expect(result(rpc, 'eth_getTransactionCount', [payer.address, 'latest'])).to.equal('0x1');

    // The next block links to it and carries nothing.
    ledger.produceBlock(1_700_000_002);
    const next = result(rpc, 'eth_getBlockByNumber', ['latest', false]);
    expect(next).to.include({ number: '0x66', parentHash: block.hash });
    expect(next.transactions).to.deep.equal([]);
  });

  it('refuses what geth refuses: bad signature data, another chain, a used nonce, a gap, missing funds, a repeat', async () => {
    const { rpc } = freshChain();
    const message = (params: unknown[]) => call(rpc, 'eth_sendRawTransaction', params).error?.message ?? '';

    expect(message(['0xzz'])).to.match(/^rlp/);
    expect(message([`0x02${'00'.repeat(10)}`])).to.match(/^rlp/);
    expect(call(rpc, 'eth_sendRawTransaction', [42]).error?.code).to.equal(-32602);
    expect(message([await transfer(0, 1n, { chainId: 5 })])).to.match(/invalid chain id for signer: have 5 want 1/);
    expect(message([await transfer(1, 1n)])).to.match(/^nonce too high/);
    const tooMuch = await unfunded.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to: RECIPIENT, value: parseEther('100'), nonce: 0, gas: 21_000n, maxFeePerGas: parseGwei('10'), maxPriorityFeePerGas: 1n });
    expect(message([tooMuch])).to.match(/^insufficient funds for gas \* price \+ value/);
    expect(message([await transfer(0, 1n, { maxFeePerGas: GWEI, maxPriorityFeePerGas: 1n })])).to.match(/^max fee per gas less than block base fee/);
    expect(message([await transfer(0, 1n, { gas: 20_000n })])).to.match(/^intrinsic gas too low/);

    const ok = await transfer(0, 1n);
    expect(call(rpc, 'eth_sendRawTransaction', [ok]).result).to.equal(keccak256(ok));
    expect(message([ok])).to.equal('already known');
    expect(message([await transfer(0, 2n)])).to.equal('nonce too low');
    // Pending spending counts: the whole balance cannot be sent twice.
    expect(message([await transfer(1, FUNDED_BALANCE_WEI)])).to.match(/^insufficient funds/);
  });

  it('recovers the sender of a legacy EIP-155 transaction and takes its gas price', async () => {
    const { rpc, ledger } = freshChain();
    const raw = await payer.signTransaction({ chainId: CHAIN_ID, type: 'legacy', to: RECIPIENT, value: 7n, nonce: 0, gas: 21_000n, gasPrice: parseGwei('3') });
    const hash = result(rpc, 'eth_sendRawTransaction', [raw]);
    ledger.produceBlock(1_700_000_000);
    const tx = result(rpc, 'eth_getTransactionByHash', [hash]);
    expect(tx).to.include({ from: payer.address.toLowerCase(), type: '0x0', gasPrice: `0x${parseGwei('3').toString(16)}` });
    // EIP-155: v = recovery + 35 + 2 × chain id.
    expect(tx.v).to.be.oneOf(['0x25', '0x26']);
  });

  it("answers the ERC-20 views by eth_call and sets an account's ether by anvil_setBalance, as development nodes do", async () => {
    const { rpc, ledger } = freshChain();
    const token = '0xdac17f958d2ee523a2206206994597c13d831ec7';
    const balanceOf = (holder: string) => result(rpc, 'eth_call', [{ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [holder as Hex] }) }, 'latest']);
    // a development account holds 10^30 of every token; anyone else nothing until paid
    expect(BigInt(balanceOf(payer.address))).to.equal(10n ** 30n);
    expect(BigInt(balanceOf(RECIPIENT))).to.equal(0n);
    const raw = await payer.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to: token, value: 0n, nonce: 0, gas: 60_000n, maxFeePerGas: parseGwei('10'), maxPriorityFeePerGas: parseGwei('1'), data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [RECIPIENT, 1234n] }) });
    result(rpc, 'eth_sendRawTransaction', [raw]);
    ledger.produceBlock(1_700_000_000);
    expect(balanceOf(RECIPIENT), 'one word, 1234').to.equal(`0x${'0'.repeat(60)}04d2`);
    expect(call(rpc, 'eth_call', [{ to: token, data: '0x12345678' }, 'latest']).error?.message).to.equal('execution reverted');

    expect(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest']), 'nobody paid it ether').to.equal('0x0');
    expect(result(rpc, 'anvil_setBalance', [RECIPIENT, '0xde0b6b3a7640000'])).to.equal(null);
    expect(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest'])).to.equal('0xde0b6b3a7640000');
    result(rpc, 'hardhat_setBalance', [RECIPIENT, '0x5']);
    expect(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest'])).to.equal('0x5');
  });

  it('has no gas estimate for a call that would revert (geth: code 3, "execution reverted: <reason>"), and one once it would not; the estimate changes nothing', async () => {
    const { rpc, ledger } = freshChain();
    const token = '0xdac17f958d2ee523a2206206994597c13d831ec7';
    const spender = RECIPIENT;
    // transferFrom by the spender before the owner's approve: what a router deposit does before its approve is mined
    const pull = { from: spender, to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [payer.address, spender, 500n] }) };
    const refused = call(rpc, 'eth_estimateGas', [pull]);
    expect(refused.error).to.deep.include({ code: 3, message: 'execution reverted: ERC20: insufficient allowance' });
    const approve = await payer.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to: token, value: 0n, nonce: 0, gas: 60_000n, maxFeePerGas: parseGwei('10'), maxPriorityFeePerGas: parseGwei('1'), data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, 500n] }) });
    result(rpc, 'eth_sendRawTransaction', [approve]);
    expect(call(rpc, 'eth_estimateGas', [pull]).error, 'the approve is only pooled').to.deep.include({ code: 3 });
    ledger.produceBlock(1_700_000_000);
    expect(BigInt(result(rpc, 'eth_estimateGas', [pull])) > 21_000n, 'intrinsic gas and calldata').to.equal(true);
    const allowance = result(rpc, 'eth_call', [{ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'allowance', args: [payer.address, spender] }) }, 'latest']);
    expect(BigInt(allowance), 'the estimate spent none of the allowance').to.equal(500n);
  });
});

describe('EVM chain reorganisations', () => {
  it('replaces the last blocks: other hashes at the same heights, the state as before them, the displaced transactions mined again in the first new block', async () => {
    const { rpc, ledger } = freshChain(100);
    const value = parseEther('2');
    const hash = result(rpc, 'eth_sendRawTransaction', [await transfer(0, value)]);
    const b101 = ledger.produceBlock(1_700_000_000);
    const b102 = ledger.produceBlock(1_700_000_002);
    const paid = result(rpc, 'eth_getBalance', [RECIPIENT, 'latest']);
    expect(BigInt(paid)).to.equal(value);

    const { displaced, produced } = ledger.reorg(2, 1_700_000_004);
    expect(displaced).to.deep.equal([
      { number: 101, hash: b101.block.hash, timestamp: 1_700_000_000 },
      { number: 102, hash: b102.block.hash, timestamp: 1_700_000_002 },
    ]);
    expect(produced.map((p) => p.number)).to.deep.equal([101, 102]);
    expect(produced.map((p) => p.block.hash)).to.not.include.members([b101.block.hash, b102.block.hash]);
    expect(produced[1].block.parentHash).to.equal(produced[0].block.hash);
    expect(result(rpc, 'eth_blockNumber')).to.equal('0x66');
    expect(result(rpc, 'eth_getBlockByHash', [b101.block.hash, false]), 'the displaced block is gone').to.equal(null);
    const receipt = result(rpc, 'eth_getTransactionReceipt', [hash]);
    expect(receipt).to.include({ blockHash: produced[0].block.hash, blockNumber: '0x65', status: '0x1' });
    // the transfer ran once on the new branch: the same balances, not twice the value
    expect(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest'])).to.equal(paid);
    expect(result(rpc, 'eth_getTransactionCount', [payer.address, 'latest'])).to.equal('0x1');
  });

  it('with requeue the displaced transaction goes back to the pool: the replacement block is empty, the balances as before it, mined one height on', async () => {
    const { rpc, ledger } = freshChain(100);
    const hash = result(rpc, 'eth_sendRawTransaction', [await transfer(0, 7n)]);
    ledger.produceBlock(1_700_000_000);
    const { produced } = ledger.reorg(1, 1_700_000_002, { requeue: true });
    expect(produced[0].block.transactions).to.deep.equal([]);
    expect(result(rpc, 'eth_getTransactionReceipt', [hash]), 'not mined on the new branch').to.equal(null);
    expect(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest'])).to.equal('0x0');
    expect(BigInt(result(rpc, 'eth_getBalance', [payer.address, 'latest']))).to.equal(FUNDED_BALANCE_WEI);
    expect(result(rpc, 'eth_getTransactionCount', [payer.address, 'pending']), 'pending again').to.equal('0x1');
    ledger.produceBlock(1_700_000_004);
    expect(result(rpc, 'eth_getTransactionReceipt', [hash])).to.include({ blockNumber: '0x66', status: '0x1' });
    expect(result(rpc, 'eth_getBalance', [RECIPIENT, 'latest'])).to.equal('0x7');
  });

  it('refuses a reorg deeper than the blocks it produced (fixture blocks stay)', async () => {
    const { rpc, ledger } = freshChain(100);
    expect(() => ledger.reorg(1, 1_700_000_000)).to.throw(/needs as many produced blocks/);
    result(rpc, 'eth_sendRawTransaction', [await transfer(0, 1n)]);
    ledger.produceBlock(1_700_000_000);
    expect(() => ledger.reorg(2, 1_700_000_002)).to.throw(/needs as many produced blocks/);
    expect(() => ledger.reorg(0, 1_700_000_002)).to.throw();
  });
});

describe('Block producer', () => {
  let server: Server;
  let received: { headers: IncomingMessage['headers']; body: any }[];
  let failNext = 0;
  let url = '';

  before(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        if (failNext > 0) {
          failNext -= 1;
          res.statusCode = 503;
          return res.end('down');
        }
        received.push({ headers: req.headers, body: JSON.parse(text) });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received = [];
    failNext = 0;
  });

  it('stays still on a chain that never got a transaction, then delivers each block as a streamer does, in order after a failure', async () => {
    const { ledger, rpc } = freshChain(500);
    let now = 1_700_000_000;
    const producer = new BlockProducer({ ledgers: [ledger], logger: pino({ level: 'silent' }), target: { url, secret: 's3cret' }, nowSec: () => now });
    await producer.tick();
    expect(received).to.deep.equal([]);
    expect(result(rpc, 'eth_blockNumber')).to.equal(`0x${(500).toString(16)}`);

    const hash: Hex = result(rpc, 'eth_sendRawTransaction', [await transfer(0, 5n)]);
    failNext = 1;
    await producer.tick();
    expect(received, 'the stream target was down').to.deep.equal([]);
    now += 2;
    await producer.tick();
    expect(received.map((r) => r.body.metadata.batch_start_range)).to.deep.equal([501, 502]);
    const first = received[0];
    expect(first.headers['content-secret-x']).to.equal('s3cret');
    expect(first.headers['cl-stream-network']).to.equal('ethereum-mainnet');
    expect(first.body.metadata).to.include({ dataset: 'block_with_receipts', network: 'ethereum-mainnet', batch_end_range: 501 });
    expect(first.body.data).to.have.length(1);
    const { block, receipts } = first.body.data[0];
    expect(block.transactions.map((t: any) => t.hash)).to.deep.equal([hash]);
    expect(receipts.map((r: any) => r.transactionHash)).to.deep.equal([hash]);
    expect(block).to.deep.equal(result(rpc, 'eth_getBlockByNumber', ['0x1f5', true]));
    expect(received[1].body.data[0].block.parentHash).to.equal(block.hash);
  });

  it("posts a reorg as the streamer re-delivers it: the replacement blocks in one batch, blocks_reorged their heights, reorgs each displaced block's number, hash and timestamp", async () => {
    const { ledger, rpc } = freshChain(700);
    let now = 1_700_000_000;
    const producer = new BlockProducer({ ledgers: [ledger], logger: pino({ level: 'silent' }), target: { url, secret: 's3cret' }, nowSec: () => now });
    const hash: Hex = result(rpc, 'eth_sendRawTransaction', [await transfer(0, 5n)]);
    await producer.tick();
    now += 2;
    await producer.tick();
    const [b701, b702] = received.map((r) => r.body.data[0].block);
    expect(received.every((r) => r.body.metadata.blocks_reorged === null && r.body.metadata.reorgs === null && r.headers['batch-blocks-reorged'] === '[]')).to.equal(true);

    now += 2;
    const reorg = producer.reorg('ethereum-mainnet', 2);
    expect(() => producer.reorg('bitcoin-mainnet', 1)).to.throw(/does not reorganise/);
    await producer.tick();
    expect(received).to.have.length(4);
    const redelivery = received[2];
    expect(redelivery.body.metadata).to.include({ batch_start_range: 701, batch_end_range: 702 });
    expect(redelivery.body.metadata.blocks_reorged).to.deep.equal([701, 702]);
    expect(redelivery.body.metadata.reorgs).to.deep.equal([
      { number: 701, hash: b701.hash, timestamp: 1_700_000_000 },
      { number: 702, hash: b702.hash, timestamp: 1_700_000_002 },
    ]);
    expect(JSON.parse(String(redelivery.headers['batch-blocks-reorged']))).to.deep.equal([701, 702]);
    expect(redelivery.body.data.map((d: any) => d.block.hash)).to.deep.equal(reorg.produced.map((p) => p.block.hash));
    expect(redelivery.body.data[0].block.transactions.map((t: any) => t.hash)).to.deep.equal([hash]);
    // the next block builds on the new branch
    expect(received[3].body.data[0].block).to.include({ number: '0x2bf', parentHash: reorg.produced[1].block.hash });
  });

  it('reorganises by itself at the configured chance: a tick draws the depth, re-delivers the head, then mines the next block', async () => {
    const { ledger, rpc } = freshChain(800);
    const now = 1_700_000_000;
    const draws = [0.1, 0.99]; // a reorg at a 0.5 chance, the depth 1 + floor(0.99 × 1)
    const producer = new BlockProducer({ ledgers: [ledger], logger: pino({ level: 'silent' }), target: { url, secret: 's3cret' }, nowSec: () => now, randomReorgs: { chance: 0.5, maxDepth: 1, random: () => draws.shift() ?? 0.9 } });
    result(rpc, 'eth_sendRawTransaction', [await transfer(0, 5n)]);
    await producer.tick(); // nothing produced yet to replace: the draw is used up, no reorg
    draws.push(0.1, 0.5);
    await producer.tick();
    expect(received.map((r) => [r.body.metadata.batch_start_range, r.body.metadata.blocks_reorged])).to.deep.equal([[801, null], [801, [801]], [802, null]]);
    expect(received[1].body.metadata.reorgs[0].hash).to.equal(received[0].body.data[0].block.hash);
    await producer.tick();
    expect(received.slice(3).map((r) => r.body.metadata.blocks_reorged), 'a draw above the chance: no reorg').to.deep.equal([null]);
  });
});
