import { expect } from 'chai';
import { OriginError, networkByName, tronHexToBase58, type NetworkInfo } from '@chainpipe/chains';
import { systemClock } from '@chainpipe/runtime';
import { readFixtureJson, solanaWireTransaction } from '@chainpipe/testing';
import { fetchFromOrigin, type RpcCall } from '../src/origin';

type Json = any;

/**
 * The only stand-in here is the chain node: a function answering JSON-RPC methods from the real
 * fixture files (as a node would: null for unknown hashes, RPC errors where a node raises them).
 */
function fixtureNode(answers: Record<string, (params: unknown[]) => unknown>) {
  const calls: { method: string; params: unknown[]; timeoutMs: number }[] = [];
  const call: RpcCall = async (method, params, timeoutMs) => {
    calls.push({ method, params, timeoutMs });
    const answer = answers[method];
    if (!answer) throw new OriginError(`origin error -32601: the method ${method} does not exist`, 'rpc', { code: -32601, message: 'method not found' });
    return answer(params);
  };
  return { call, calls };
}

const net = (name: string): NetworkInfo => networkByName(name)!;
const dec = (hex: string) => BigInt(hex).toString();

describe('queries origin: one transaction from the chain node, parsed by our parsers', () => {
  describe('EVM', () => {
    const block = readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getBlockByNumber_full.json').result;
    const receipts: Json[] = [
      readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x2e3dcd05.json').result,
      readFixtureJson<Json>('evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x9a5437ec.json').result,
    ];
    const node = () =>
      fixtureNode({
        eth_getTransactionByHash: ([h]) => block.transactions.find((t: Json) => t.hash === h) ?? null,
        eth_getTransactionReceipt: ([h]) => receipts.find((r) => r.transactionHash === h) ?? null,
        eth_getBlockByNumber: ([n, full]) => (n === block.number ? { ...block, transactions: full ? block.transactions : block.transactions.map((t: Json) => t.hash) } : null),
      });

    it('assembles transaction, receipt and block header into the record a streamed block would give', async () => {
      const raw = block.transactions[0];
      const receipt = receipts[0];
      const { call, calls } = node();
      const lookup = await fetchFromOrigin(net('ethereum-mainnet'), raw.hash, call, 5_000);
      expect(lookup.found).to.equal(true);
      const tx = lookup.found ? lookup.tx : (undefined as never);
      expect(tx.tx_hash).to.equal(raw.hash);
      expect(tx.sender).to.equal(raw.from);
      expect(tx.receiver).to.equal(raw.to);
      expect(tx.height).to.equal(Number(block.number));
      expect(tx.block_hash).to.equal(block.hash);
      expect(tx.tx_time).to.equal(Number(block.timestamp));
      expect(tx.tx_fee).to.equal((BigInt(receipt.gasUsed) * BigInt(raw.gasPrice)).toString());
      expect(tx.token_transfers.map((t) => [t.token_contract_address, t.amount])).to.deep.equal([[receipt.logs[0].address, dec(receipt.logs[0].data)]]);
      expect(calls.map((c) => c.method).sort()).to.deep.equal(['eth_getBlockByNumber', 'eth_getTransactionByHash', 'eth_getTransactionReceipt']);
      // The block is asked for without full transactions: only its header is needed.
      expect(calls.find((c) => c.method === 'eth_getBlockByNumber')!.params).to.deep.equal([block.number, false]);
    });

    it('an unknown hash is "not found" after one call', async () => {
      const { call, calls } = node();
      const lookup = await fetchFromOrigin(net('ethereum-mainnet'), '0x' + 'ab'.repeat(32), call, 5_000);
      expect(lookup).to.deep.equal({ found: false });
      expect(calls).to.have.length(1);
    });

    it('a transaction not in a block yet is pending, without receipt or block calls', async () => {
      const raw = { ...block.transactions[1], blockHash: null, blockNumber: null, transactionIndex: null };
      const { call, calls } = fixtureNode({ eth_getTransactionByHash: () => raw });
      const lookup = await fetchFromOrigin(net('ethereum-mainnet'), raw.hash, call, 5_000);
      expect(lookup.found && lookup.tx.tx_status).to.equal('pending');
      expect(lookup.found && lookup.tx.amount).to.equal(dec(raw.value));
      expect(calls).to.have.length(1);
    });

    it('every call shares one deadline: later calls get only what is left of it', async () => {
      const { call: inner } = node();
      const given: number[] = [];
      let t = 0;
      const call: RpcCall = async (method, params, timeoutMs) => {
        given.push(timeoutMs);
        t += 300; // each answer takes 300 ms of the (fake) clock
        return inner(method, params, timeoutMs);
      };
      await fetchFromOrigin(net('ethereum-mainnet'), block.transactions[1].hash, call, 1_000, { now: () => t });
      expect(given[0]).to.equal(1_000);
      expect(given.slice(1).every((ms) => ms <= 700)).to.equal(true);
    });

    it('a spent deadline fails as a timeout without calling the node again', async () => {
      let t = 0;
      const { call: inner, calls } = node();
      const call: RpcCall = async (method, params, timeoutMs) => {
        t += 2_000;
        return inner(method, params, timeoutMs);
      };
      const err = await fetchFromOrigin(net('ethereum-mainnet'), block.transactions[1].hash, call, 1_000, { now: () => t }).catch((e) => e);
      expect(err).to.be.instanceOf(OriginError);
      expect(err.kind).to.equal('timeout');
      expect(calls).to.have.length(1);
    });

    it('an answer that is not a transaction is an invalid-origin error, not a crash', async () => {
      const { call } = fixtureNode({ eth_getTransactionByHash: () => 'garbage' });
      const err = await fetchFromOrigin(net('ethereum-mainnet'), block.transactions[1].hash, call, 1_000).catch((e) => e);
      expect(err).to.be.instanceOf(OriginError);
      expect(err.kind).to.equal('invalid');
    });
  });

  it('Tron: the eth-compatible view, asked with 0x + txID; the record uses the bare txID and Base58 addresses', async () => {
    const tx = readFixtureJson<Json>('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionByHash_usdt_0x9ff75c01-docs-example.json').result;
    const receipt = readFixtureJson<Json>('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionReceipt_usdt_0x9ff75c01-docs-example.json').result;
    const block = readFixtureJson<Json>('tron/tron-mainnet-39507235.jsonrpc_eth_getBlockByNumber_hashes_TRUNCATED-docs-example.json').result;
    const { call, calls } = fixtureNode({
      eth_getTransactionByHash: ([h]) => (h === tx.hash ? tx : null),
      eth_getTransactionReceipt: ([h]) => (h === receipt.transactionHash ? receipt : null),
      eth_getBlockByNumber: ([n]) => (n === block.number ? block : null),
    });
    const lookup = await fetchFromOrigin(net('tron-mainnet'), tx.hash.slice(2), call, 5_000);
    expect(calls[0].params).to.deep.equal([tx.hash]);
    expect(lookup.found).to.equal(true);
    const rec = lookup.found ? lookup.tx : (undefined as never);
    expect(rec.tx_hash).to.equal(tx.hash.slice(2));
    expect(rec.sender).to.equal(tronHexToBase58(tx.from));
    expect(rec.height).to.equal(Number(tx.blockNumber));
    // Tron's eth view reports block time in milliseconds; records hold seconds.
    expect(rec.tx_time).to.equal(Math.floor(Number(block.timestamp) / 1000));
    const log = receipt.logs[0];
    expect(rec.token_transfers).to.have.length(1);
    expect(rec.token_transfers[0].token_contract_address).to.equal(tronHexToBase58(log.address));
    expect(rec.token_transfers[0].to_address).to.equal(tronHexToBase58('0x' + log.topics[2].slice(26)));
    expect(rec.token_transfers[0].amount).to.equal(dec(log.data));
  });

  it('Solana: getTransaction jsonParsed; null is "not found"', async () => {
    const result = readFixtureJson<Json>('solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json').result;
    const sig = result.transaction.signatures[0];
    const { call, calls } = fixtureNode({ getTransaction: ([s]) => (s === sig ? result : null) });
    const lookup = await fetchFromOrigin(net('solana-mainnet'), sig, call, 5_000);
    expect(calls[0].params).to.deep.equal([sig, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }]);
    expect(lookup.found).to.equal(true);
    const rec = lookup.found ? lookup.tx : (undefined as never);
    const transfer = result.transaction.message.instructions.find((i: Json) => i.parsed?.type === 'transfer').parsed.info;
    expect(rec.tx_hash).to.equal(sig);
    expect(rec.height).to.equal(result.slot);
    expect(rec.tx_time).to.equal(result.blockTime);
    expect(rec.sender).to.equal(transfer.source);
    expect(rec.receiver).to.equal(transfer.destination);
    expect(rec.amount).to.equal(String(transfer.lamports));
    expect(rec.tx_fee).to.equal(String(result.meta.fee));
    expect(await fetchFromOrigin(net('solana-mainnet'), '1'.repeat(88), call, 5_000)).to.deep.equal({ found: false });
  });

  it('Solana: asked for base64 (or base58), the wire answer gives the record of the jsonParsed answer', async () => {
    // The devnet block is the one fixture in json encoding; its transactions as getTransaction
    // answers, binary ones written (and signature-checked) by libs/testing.
    const json = readFixtureJson<Json>('solana/sol-devnet-blockheight139015678.getBlock_json_full.json').result;
    const parsed = readFixtureJson<Json>('solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json').result;
    const i = json.transactions.findIndex((t: Json) => t.meta.postTokenBalances.length > 0);
    const sig = json.transactions[i].transaction.signatures[0];
    const answer = (tx: Json, transaction: unknown) => ({ blockTime: json.blockTime, meta: tx.meta, slot: json.parentSlot + 1, transaction, version: 'legacy' });
    const answers: Record<string, unknown> = {
      jsonParsed: answer(parsed.transactions[i], parsed.transactions[i].transaction),
      base64: answer(json.transactions[i], [solanaWireTransaction(json.transactions[i], 'base64'), 'base64']),
      base58: answer(json.transactions[i], [solanaWireTransaction(json.transactions[i], 'base58'), 'base58']),
    };
    const lookup = async (solanaEncoding: 'jsonParsed' | 'base64' | 'base58') => {
      const { call, calls } = fixtureNode({ getTransaction: ([s, config]) => (s === sig ? answers[(config as Json).encoding] : null) });
      const found = await fetchFromOrigin(net('solana-devnet'), sig, call, 5_000, systemClock, { solanaEncoding });
      expect(calls[0].params).to.deep.equal([sig, { encoding: solanaEncoding, maxSupportedTransactionVersion: 0 }]);
      return found.found ? found.tx : (undefined as never);
    };
    const want = await lookup('jsonParsed');
    expect(want.tx_hash).to.equal(sig);
    expect(want.tx_fee).to.equal(String(json.transactions[i].meta.fee));
    expect(await lookup('base64')).to.deep.equal(want);
    expect(await lookup('base58')).to.deep.equal(want);
  });

  describe('Bitcoin', () => {
    // getrawtransaction <txid> true answers the block's transaction object plus where it is mined.
    const block = readFixtureJson<Json>('bitcoin/btc-mainnet-50001.getblock_verbosity2.json');
    const node = (headers: boolean) =>
      fixtureNode({
        getrawtransaction: ([txid]) => {
          const tx = block.tx.find((t: Json) => t.txid === txid);
          if (!tx) throw new OriginError('origin error -5: No such mempool or blockchain transaction.', 'rpc', { code: -5, message: 'No such mempool or blockchain transaction.' });
          return { ...tx, blockhash: block.hash, blocktime: block.time, time: block.time, confirmations: block.confirmations };
        },
        ...(headers ? { getblockheader: ([h]: unknown[]) => (h === block.hash ? { hash: block.hash, height: block.height, time: block.time } : null) } : {}),
      });

    it('getrawtransaction verbose, with the height from getblockheader', async () => {
      const raw = block.tx[1];
      const lookup = await fetchFromOrigin(net('bitcoin-mainnet'), raw.txid, node(true).call, 5_000);
      expect(lookup.found).to.equal(true);
      const rec = lookup.found ? lookup.tx : (undefined as never);
      expect(rec.tx_hash).to.equal(raw.txid);
      expect(rec.height).to.equal(block.height);
      expect(rec.block_hash).to.equal(block.hash);
      expect(rec.tx_time).to.equal(block.time);
      expect(rec.to_details.map((d) => d.amount)).to.deep.equal(raw.vout.map((o: Json) => String(Math.round(o.value * 1e8))));
      expect(rec.from_details.map((d) => d.ref_tx_hash)).to.deep.equal(raw.vin.map((i: Json) => i.txid));
    });

    it('a node without getblockheader leaves the height null; RPC error -5 is "not found"', async () => {
      const lookup = await fetchFromOrigin(net('bitcoin-mainnet'), block.tx[2].txid, node(false).call, 5_000);
      expect(lookup.found && lookup.tx.height).to.equal(null);
      expect(await fetchFromOrigin(net('bitcoin-mainnet'), 'ab'.repeat(32), node(true).call, 5_000)).to.deep.equal({ found: false });
    });
  });
});
