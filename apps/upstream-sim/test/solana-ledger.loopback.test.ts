import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import pino from 'pino';
import { Registry } from 'prom-client';
import { networkByName } from '@chainpipe/chains';
import { MnemonicSigner, RENT_EXEMPT_MINIMUM, SolanaSender, signSolanaTransfer } from '@chainpipe/custody';
import { streamerBody } from '@chainpipe/testing';
import { parseChainPayload } from '@chainpipe/tx-parsers';
import { RpcError } from '../src/json-rpc';
import { buildChainNodes } from '../src/chain-nodes/nodes';
import { chainNodesRouter } from '../src/chain-nodes/router';
import { FUNDED_LAMPORTS, SolanaLedger } from '../src/chain-nodes/solana-ledger';
import { emptySolanaChain, solanaNode } from '../src/chain-nodes/solana-node';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/**
 * The simulated Solana chain: what a node's preflight refuses (a forged signature, a duplicate,
 * an expired blockhash, the rent rule, funds), and the slot it produces in the form our Solana
 * parser reads from the streamer's `block` dataset.
 */
describe('simulated Solana ledger: sendTransaction preflight and produced slots', () => {
  const signer = new MnemonicSigner(MNEMONIC);
  let payer: { index: number; address: string };
  let ledger: SolanaLedger;
  let node: ReturnType<typeof solanaNode>;
  const call = (method: string, params: unknown[]) => node.methods.get(method)!(params);
  const refusal = (f: () => unknown): { code: number; message: string; err: unknown } | undefined => {
    try {
      f();
      return undefined;
    } catch (err) {
      const e = err as RpcError;
      return { code: e.code, message: e.message, err: (e.data as { err?: unknown } | undefined)?.err };
    }
  };
  const transfer = async (from: { index: number; address: string }, to: string, lamports: bigint, blockhash = ledger.latestBlockhash().blockhash) =>
    signSolanaTransfer(signer, from, to, lamports, { maxNetworkFee: 5000n, blockhash, lastValidBlockHeight: 0 });

  beforeEach(async () => {
    payer = { index: 900, address: await signer.addressAt('svm', 900) };
    const chain = emptySolanaChain();
    ledger = new SolanaLedger(chain, { network: 'solana-mainnet', funded: new Map([[payer.address, FUNDED_LAMPORTS]]) });
    node = solanaNode(chain, ledger);
  });

  it('takes a signed transfer, moves lamports less the 5000-lamport fee in the next slot, and serves its status, block and transaction', async () => {
    const to = await signer.addressAt('svm', 1);
    const { raw, hash } = await transfer(payer, to, 2_000_000_000n);
    expect(call('sendTransaction', [raw, { encoding: 'base64' }])).to.equal(hash);
    expect(ledger.active).to.equal(true);
    expect((call('getSignatureStatuses', [[hash]]) as { value: unknown[] }).value).to.deep.equal([null]);
    const produced = ledger.produceBlock(1_700_000_000);
    expect(produced).to.include({ number: 1, dataset: 'block' });
    expect(produced.item, 'the stream posts the getBlock form').to.equal(produced.block);
    expect(produced.block.transactions).to.have.length(1);
    expect(call('getBalance', [to])).to.deep.include({ value: 2_000_000_000 });
    expect(call('getBalance', [payer.address])).to.deep.include({ value: Number(FUNDED_LAMPORTS - 2_000_000_000n - 5000n) });
    const [status] = (call('getSignatureStatuses', [[hash]]) as { value: { slot: number; err: unknown; confirmationStatus: string }[] }).value;
    expect(status).to.include({ slot: 1, err: null, confirmationStatus: 'confirmed' });
    expect((call('getTransaction', [hash, { encoding: 'json' }]) as { slot: number }).slot).to.equal(1);

    // the streamer's `block` dataset of the slot, read by our Solana parser as chain-parser does
    const body = streamerBody([produced.item as never], { network: 'solana-mainnet', dataset: 'block', start: produced.number });
    const parsed = parseChainPayload(Buffer.from(body), networkByName('solana-mainnet')!, {});
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.issues).to.deep.equal([]);
    const [tx] = parsed.blocks[0].transactions;
    expect(tx).to.include({ tx_hash: hash, sender: payer.address, receiver: to, amount: '2000000000', transfer_type: 'native', tx_status: 'success', tx_fee: '5000', height: 1 });
  });

  it("refuses a duplicate as a node does: -32002 'already been processed', AlreadyProcessed", async () => {
    const { raw } = await transfer(payer, await signer.addressAt('svm', 2), RENT_EXEMPT_MINIMUM);
    call('sendTransaction', [raw, { encoding: 'base64' }]);
    ledger.produceBlock(1);
    expect(refusal(() => call('sendTransaction', [raw, { encoding: 'base64' }]))).to.deep.equal({ code: -32002, message: 'Transaction simulation failed: This transaction has already been processed', err: 'AlreadyProcessed' });
  });

  it('refuses a signature that is not the signers\' (-32003) and a blockhash older than 150 blocks (BlockhashNotFound; getFeeForMessage null)', async () => {
    const { raw } = await transfer(payer, await signer.addressAt('svm', 3), RENT_EXEMPT_MINIMUM);
    const bytes = Buffer.from(raw, 'base64');
    bytes[bytes.length - 1] ^= 1; // the last byte of the message: the signature no longer covers it
    expect(refusal(() => call('sendTransaction', [bytes.toString('base64'), { encoding: 'base64' }]))).to.deep.include({ code: -32003, message: 'Transaction signature verification failure' });
    const old = ledger.latestBlockhash().blockhash;
    for (let i = 0; i < 151; i++) ledger.produceBlock(i);
    const stale = await transfer(payer, await signer.addressAt('svm', 3), RENT_EXEMPT_MINIMUM, old);
    expect(refusal(() => call('sendTransaction', [stale.raw, { encoding: 'base64' }]))).to.deep.equal({ code: -32002, message: 'Transaction simulation failed: Blockhash not found', err: 'BlockhashNotFound' });
    expect(call('getFeeForMessage', [Buffer.from(stale.raw, 'base64').subarray(65).toString('base64')])).to.deep.include({ value: null });
  });

  it('applies the rent rule: an account may end empty or rent-exempt, a new account gets at least the minimum; no funds, no transfer', async () => {
    const a = { index: 4, address: await signer.addressAt('svm', 4) };
    call('sendTransaction', [(await transfer(payer, a.address, 10_000_000n)).raw, { encoding: 'base64' }]);
    ledger.produceBlock(1);
    const fresh = await signer.addressAt('svm', 5);
    const tooLittle = await transfer(a, fresh, RENT_EXEMPT_MINIMUM - 1n);
    expect(refusal(() => call('sendTransaction', [tooLittle.raw, { encoding: 'base64' }]))).to.deep.equal({
      code: -32002, message: 'Transaction simulation failed: Transaction results in an account (1) with insufficient funds for rent', err: { InsufficientFundsForRent: { account_index: 1 } },
    });
    const dust = await transfer(a, fresh, 10_000_000n - 5000n - 1000n);
    expect(refusal(() => call('sendTransaction', [dust.raw, { encoding: 'base64' }]))?.err).to.deep.equal({ InsufficientFundsForRent: { account_index: 0 } });
    const overdraft = await transfer(a, fresh, 10_000_000n);
    expect(refusal(() => call('sendTransaction', [overdraft.raw, { encoding: 'base64' }]))?.err).to.deep.equal({ InstructionError: [0, { Custom: 1 }] });
    // everything less the fee: the account closes, which the chain allows
    const empties = await transfer(a, fresh, 10_000_000n - 5000n);
    expect(call('sendTransaction', [empties.raw, { encoding: 'base64' }])).to.equal(empties.hash);
    ledger.produceBlock(2);
    expect(call('getBalance', [a.address])).to.deep.include({ value: 0 });
    const nothing = await transfer(a, fresh, RENT_EXEMPT_MINIMUM);
    expect(refusal(() => call('sendTransaction', [nothing.raw, { encoding: 'base64' }]))?.err).to.equal('AccountNotFound');
  });

  it('prices a message at 5000 lamports per signature under a valid blockhash', async () => {
    const { raw } = await transfer(payer, await signer.addressAt('svm', 6), RENT_EXEMPT_MINIMUM);
    // the wire transaction is 1 (count) + 64 (signature) bytes, then the message
    const message = Buffer.from(raw, 'base64').subarray(65).toString('base64');
    expect(call('getFeeForMessage', [message])).to.deep.include({ value: 5000 });
  });
});

/**
 * The executor's Solana sender against the simulated node over HTTP (the simulator's own router
 * in this process, slots produced by hand): fee terms, the rent rule before signing, broadcast
 * outcomes (an expired blockhash is `replaced`, a processed transaction `known`) and receipts.
 */
describe('SolanaSender against the simulated Solana node', () => {
  const signer = new MnemonicSigner(MNEMONIC);
  let server: Server;
  let ledger: SolanaLedger;
  let sender: SolanaSender;
  let payer: { index: number; address: string };

  beforeEach(async () => {
    payer = { index: 901, address: await signer.addressAt('svm', 901) };
    const chainNodes = buildChainNodes([], { clientVersion: 'test', solanaLedger: { funded: new Map([[payer.address, FUNDED_LAMPORTS]]) } });
    ledger = chainNodes.nodes.get('solana-mainnet')!.solanaLedger!;
    const app = express();
    app.use(chainNodesRouter({ chainNodes, logger: pino({ level: 'silent' }), registry: new Registry(), bodyLimitBytes: 1024 * 1024, maxBatch: 10 }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    sender = new SolanaSender({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc/solana-mainnet`, timeoutMs: 5000 }, signer);
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('plans the fee the node prices, sends, and reads the receipt with the slots since (its own counting)', async () => {
    const to = await signer.addressAt('svm', 11);
    const plan = await sender.feePlan(payer.address, to);
    expect(plan).to.include({ maxNetworkFee: 5000n, blockhash: ledger.latestBlockhash().blockhash });
    const signed = await sender.sign(payer, { to, value: 3_000_000_000n, fees: plan });
    expect(signed.nonce).to.equal(null);
    expect(await sender.receipt(signed.hash)).to.deep.equal({ mined: false });
    expect(await sender.broadcast(signed.raw, signed.hash)).to.equal('accepted');
    ledger.produceBlock(1);
    ledger.produceBlock(2);
    expect(await sender.receipt(signed.hash)).to.deep.equal({ mined: true, success: true, blockNumber: 1, confirmations: 2 });
    expect(await sender.balanceOf(to)).to.equal(3_000_000_000n);
    // broadcast again (a restart): the node has processed it
    expect(await sender.broadcast(signed.raw, signed.hash)).to.equal('known');
  });

  it('a stored transaction whose blockhash expired before it reached the chain is replaced (it can never land); one that landed stays known', async () => {
    const to = await signer.addressAt('svm', 12);
    const stored = await sender.sign(payer, { to, value: RENT_EXEMPT_MINIMUM });
    const landed = await sender.sign(payer, { to: await signer.addressAt('svm', 13), value: RENT_EXEMPT_MINIMUM });
    expect(await sender.broadcast(landed.raw, landed.hash)).to.equal('accepted');
    for (let i = 0; i < 151; i++) ledger.produceBlock(i);
    expect(await sender.broadcast(stored.raw, stored.hash)).to.equal('replaced');
    expect(await sender.broadcast(landed.raw, landed.hash)).to.equal('known');
  });

  it('refuses before signing what the chain would refuse for rent: dust left at the sender, too little for a new account; emptying the account passes', async () => {
    const deposit = { index: 14, address: await signer.addressAt('svm', 14) };
    const fund = await sender.sign(payer, { to: deposit.address, value: 10_000_000n });
    await sender.broadcast(fund.raw, fund.hash);
    ledger.produceBlock(1);
    const fresh = await signer.addressAt('svm', 15);
    const refused = (value: bigint) => sender.sign(deposit, { to: fresh, value }).then(() => 'signed', (e: Error) => e.message);
    expect(await refused(10_000_000n - 5000n - 1n)).to.match(/leave .* with 1 lamports, under the rent-exempt minimum/);
    expect(await refused(RENT_EXEMPT_MINIMUM - 1n)).to.match(/stay under the rent-exempt minimum/);
    const plan = await sender.feePlan(deposit.address, fresh);
    const empties = await sender.sign(deposit, { to: fresh, value: 10_000_000n - plan.maxNetworkFee, fees: plan });
    expect(await sender.broadcast(empties.raw, empties.hash)).to.equal('accepted');
    ledger.produceBlock(2);
    expect(await sender.balanceOf(deposit.address)).to.equal(0n);
  });
});
