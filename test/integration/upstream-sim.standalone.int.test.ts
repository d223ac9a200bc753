import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { systemClock } from '@chainpipe/runtime';
import { jsonRpcCall } from '@chainpipe/upstreams';
import { fetchFromOrigin, parseTronPayload } from '@chainpipe/tx-parsers';
import {
  freePort,
  parsePrometheusText,
  readFixtureJson,
  spawnTs,
  stopProcess,
  waitFor,
  waitReady,
  type RunningProcess,
} from '@chainpipe/testing';

interface Sim {
  proc: RunningProcess;
  url: string;
  opsUrl: string;
}

async function startSim(env: Record<string, string> = {}): Promise<Sim> {
  const port = await freePort();
  const opsPort = await freePort();
  const proc = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(port), OPS_PORT: String(opsPort), ...env });
  await waitReady(proc, opsPort);
  return { proc, url: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}` };
}

function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body), signal });
}

/** Response bodies are JSON of any shape here; tests assert on them field by field. */
const json = (res: Response): Promise<any> => res.json();

let nextId = 1;
async function rpc(sim: Sim, network: string, method: string, params: unknown[] | Record<string, unknown> = []): Promise<{ status: number; body: any }> {
  const res = await post(`${sim.url}/rpc/${network}`, { jsonrpc: '2.0', id: nextId++, method, params });
  return { status: res.status, body: await json(res) };
}

async function result(sim: Sim, network: string, method: string, params: unknown[] = []): Promise<any> {
  const { status, body } = await rpc(sim, network, method, params);
  expect(status, `${network} ${method}`).to.equal(200);
  expect(body.error, `${network} ${method}: ${JSON.stringify(body.error)}`).to.equal(undefined);
  return body.result;
}

describe('upstream-sim chain nodes (real process, plain HTTP JSON-RPC)', function () {
  let sim: Sim;

  before(async () => {
    sim = await startSim({ SIM_FAULT_HOLD_MS: '1500' });
  });

  after(async () => {
    expect(await stopProcess(sim.proc)).to.equal(0);
  });

  it('answers eth_getTransactionByHash and eth_getTransactionReceipt with the fixture objects of block 17053184', async () => {
    const block = readFixtureJson('evm/eth-mainnet-17053184.block_fulltx.json');
    const receipts: any[] = readFixtureJson('evm/eth-mainnet-17053184.receipts.json');
    const tx = block.transactions[42];
    expect(await result(sim, 'ethereum-mainnet', 'eth_getTransactionByHash', [tx.hash])).to.deep.equal(tx);
    const receipt = receipts.find((r) => r.transactionHash === tx.hash);
    expect(await result(sim, 'ethereum-mainnet', 'eth_getTransactionReceipt', [tx.hash])).to.deep.equal(receipt);
    expect(await result(sim, 'ethereum-mainnet', 'eth_getTransactionByHash', [`0x${'cd'.repeat(32)}`])).to.equal(null);
    expect(await result(sim, 'ethereum-mainnet', 'eth_getBlockByNumber', [block.number, true])).to.deep.equal(block);
    expect(await result(sim, 'ethereum-mainnet', 'eth_chainId')).to.equal('0x1');
  });

  it('answers Solana getBlock and getTransaction from the fixtures', async () => {
    const block = readFixtureJson('solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json').result;
    const slot = block.parentSlot + 1;
    expect(await result(sim, 'solana-devnet', 'getSlot')).to.equal(slot);
    expect(await result(sim, 'solana-devnet', 'getBlock', [slot, { encoding: 'jsonParsed', transactionDetails: 'full', maxSupportedTransactionVersion: 0 }])).to.deep.equal({
      ...block,
      transactions: block.transactions.map((t: object) => ({ ...t, version: 'legacy' })),
    });
    const tx = readFixtureJson('solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json').result;
    expect(await result(sim, 'solana-mainnet', 'getTransaction', [tx.transaction.signatures[0], { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }])).to.deep.equal(tx);
    const missing = await rpc(sim, 'solana-devnet', 'getBlock', [slot + 1]);
    expect(missing.body.error.code).to.equal(-32004);
  });

  it('the origin fetch reads the sim\'s Solana answers in every encoding through the same parser: one record', async () => {
    // tx-gateway and pending-compensator call fetchFromOrigin with this same JSON-RPC client.
    const json = readFixtureJson('solana/sol-devnet-blockheight139015678.getBlock_json_full.json').result;
    const parsed = readFixtureJson('solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json').result;
    const i = json.transactions.findIndex((t: any) => t.meta.postTokenBalances.length > 0);
    const sig: string = json.transactions[i].transaction.signatures[0];
    const devnet = networkByName('solana-devnet')!;
    const call = (method: string, params: unknown[], timeoutMs: number) => jsonRpcCall(`${sim.url}/rpc/solana-devnet`, method, params, timeoutMs);
    const records = [];
    for (const solanaEncoding of ['jsonParsed', 'json', 'base64', 'base58'] as const) {
      const lookup = await fetchFromOrigin(devnet, sig, call, 5_000, systemClock, { solanaEncoding });
      expect(lookup.found, solanaEncoding).to.equal(true);
      records.push(lookup.found ? lookup.tx : undefined);
    }
    for (const r of records.slice(1)) expect(r).to.deep.equal(records[0]);
    // Expectations from the jsonParsed fixture: the transaction's SPL token moves and its fee.
    const rec = records[0]!;
    const moves = [...parsed.transactions[i].transaction.message.instructions, ...parsed.transactions[i].meta.innerInstructions.flatMap((g: any) => g.instructions)]
      .filter((ix: any) => ix.program === 'spl-token' && ['transfer', 'transferChecked'].includes(ix.parsed?.type))
      .map((ix: any) => ix.parsed.info.amount ?? ix.parsed.info.tokenAmount.amount);
    expect(moves.length).to.be.greaterThan(0);
    expect(rec.tx_hash).to.equal(sig);
    expect(rec.height).to.equal(json.parentSlot + 1);
    expect(rec.tx_fee).to.equal(String(json.transactions[i].meta.fee));
    expect(rec.token_transfers.map((t) => t.amount).sort()).to.deep.equal([...moves].sort());
    expect(await fetchFromOrigin(devnet, '1'.repeat(88), call, 5_000, systemClock, { solanaEncoding: 'base64' })).to.deep.equal({ found: false });
  });

  it('serves the Tron node HTTP API: getblockbynum by POST and GET, {} when unknown, {"Error"} on a broken body', async () => {
    const block = readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json');
    const num = block.block_header.raw_data.number;
    const res = await post(`${sim.url}/rpc/tron-mainnet/wallet/getblockbynum`, { num, visible: false });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-sim-address-format')).to.equal('hex');
    expect(await json(res)).to.deep.equal(block);
    const byGet = await fetch(`${sim.url}/rpc/tron-mainnet/wallet/getblockbynum?num=${num}`);
    expect((await json(byGet)).blockID).to.equal(block.blockID);
    const visible = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json');
    const info = await post(`${sim.url}/rpc/tron-mainnet/wallet/gettransactioninfobyid`, { value: visible.id, visible: true });
    expect(info.headers.get('x-sim-address-format')).to.equal('base58');
    expect(await json(info)).to.deep.equal(visible);
    expect(await json(await post(`${sim.url}/rpc/tron-mainnet/wallet/getblockbynum`, { num: num + 1 }))).to.deep.equal({});
    const broken = await post(`${sim.url}/rpc/tron-mainnet/wallet/getblockbynum`, '{"num": ');
    expect(broken.status).to.equal(200);
    expect((await json(broken)).Error).to.be.a('string');
    expect((await post(`${sim.url}/rpc/tron-mainnet/wallet/nosuchmethod`, {})).status).to.equal(404);
    expect((await post(`${sim.url}/rpc/ethereum-mainnet/wallet/getnowblock`, {})).status).to.equal(404);
    expect(await result(sim, 'tron-mainnet', 'eth_chainId')).to.equal('0x2b6653dc');
  });

  it('Tron `visible`: both forms of a block from the sim parse to the same records', async () => {
    const tron = networkByName('tron-mainnet')!;
    const ctx = { chainType: tron.chainType, chainId: tron.chainId, family: tron.family, nativeSymbol: tron.nativeSymbol, nativeDecimals: tron.nativeDecimals };
    const forms = [];
    for (const visible of [true, false]) {
      const res = await post(`${sim.url}/rpc/tron-mainnet/wallet/getblockbynum`, { num: 60836289, visible });
      expect(res.headers.get('x-sim-address-format')).to.equal(visible ? 'base58' : 'hex');
      forms.push(parseTronPayload([await json(res)], ctx));
    }
    expect(forms[0].issues).to.deep.equal([]);
    expect(forms[0].blocks[0].transactions).to.have.length(170);
    expect(forms[1]).to.deep.equal(forms[0]);
  });

  it('speaks Bitcoin Core JSON-RPC: getblock and getrawtransaction, {result, error: null, id}, HTTP 500 on errors', async () => {
    const block = readFixtureJson('bitcoin/btc-mainnet-766390.getblock_verbosity2.json');
    const url = `${sim.url}/rpc/bitcoin-mainnet`;
    const getblock = await post(url, { jsonrpc: '1.0', id: 'curltest', method: 'getblock', params: [block.hash, 2] });
    expect(getblock.status).to.equal(200);
    expect(await json(getblock)).to.deep.equal({ result: block, error: null, id: 'curltest' });
    const tx = block.tx[3];
    const raw = await json(await post(url, { jsonrpc: '2.0', id: 7, method: 'getrawtransaction', params: [tx.txid, false] }));
    expect(raw).to.deep.equal({ result: tx.hex, error: null, id: 7 });
    const verbose = (await json(await post(url, { id: 8, method: 'getrawtransaction', params: { txid: tx.txid, verbose: true } }))).result;
    expect(verbose).to.include({ txid: tx.txid, blockhash: block.hash, blocktime: block.time });
    expect(verbose.vout).to.deep.equal(tx.vout);
    const prevout = readFixtureJson('bitcoin/btc-mainnet.getrawtransaction_verbosity2_prevout_55750249.json');
    expect((await json(await post(url, { id: 9, method: 'getrawtransaction', params: [prevout.txid, 2] }))).result).to.deep.equal(prevout);
    const missing = await post(url, { jsonrpc: '1.0', id: 10, method: 'getrawtransaction', params: ['00'.repeat(32)] });
    expect(missing.status).to.equal(500);
    expect(await json(missing)).to.deep.equal({ result: null, error: { code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' }, id: 10 });
    const unknown = await post(url, { jsonrpc: '1.0', id: 11, method: 'sendtoaddress', params: [] });
    expect(unknown.status).to.equal(404);
  });

  it('answers batches in order, with errors in place and nothing for notifications', async () => {
    const block = readFixtureJson('evm/eth-mainnet-13998626.block_fulltx.json');
    const res = await post(`${sim.url}/rpc/ethereum-mainnet`, [
      { jsonrpc: '2.0', id: 'a', method: 'eth_getBlockByHash', params: [block.hash, false] },
      { jsonrpc: '2.0', method: 'eth_blockNumber' },
      { jsonrpc: '2.0', id: 'b', method: 'eth_getTransactionByHash', params: [block.transactions[0].hash] },
      { jsonrpc: '2.0', id: 'c', method: 'eth_sign', params: ['0x00'] },
      'garbage',
    ]);
    expect(res.status).to.equal(200);
    const body = await json(res);
    expect(body).to.have.length(4);
    expect(body[0].id).to.equal('a');
    expect(body[0].result.transactions).to.deep.equal(block.transactions.map((t: any) => t.hash));
    expect(body[1]).to.deep.equal({ jsonrpc: '2.0', id: 'b', result: block.transactions[0] });
    expect(body[2]).to.deep.equal({ jsonrpc: '2.0', id: 'c', error: { code: -32601, message: 'the method eth_sign does not exist/is not available' } });
    expect(body[3]).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
    const onlyNotifications = await post(`${sim.url}/rpc/ethereum-mainnet`, [{ jsonrpc: '2.0', method: 'eth_blockNumber' }]);
    expect(onlyNotifications.status).to.equal(204);
    expect(await onlyNotifications.text()).to.equal('');
  });

  it('gives the JSON-RPC error codes and HTTP statuses of a real node for bad input, and stays up', async () => {
    const url = `${sim.url}/rpc/ethereum-mainnet`;
    const cases: [string, number][] = [
      ['{"jsonrpc":"2.0","id":1,"method":', -32700],
      ['', -32700],
      ['{"jsonrpc":"1.0","id":1,"method":"eth_blockNumber"}', -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_nothing"}', -32601],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x01", false]}', -32602],
      ['{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionByHash","params":[{"$gt":""}]}', -32602],
      ['[]', -32600],
      ['[' + '['.repeat(100_000) + ']'.repeat(100_000) + ']', -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"__proto__","params":[]}', -32601],
    ];
    for (const [body, code] of cases) {
      const res = await post(url, body);
      expect(res.status, body.slice(0, 60)).to.equal(200);
      const reply = await json(res);
      const error = Array.isArray(reply) ? reply[0].error : reply.error;
      expect(error.code, body.slice(0, 60)).to.equal(code);
    }
    const unknown = await post(`${sim.url}/rpc/dogecoin-mainnet`, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' });
    expect(unknown.status).to.equal(404);
    expect((await json(unknown)).error.message).to.match(/unknown network/);
    expect((await fetch(url)).status).to.equal(405);
    const huge = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: ['x'.repeat(2 * 1024 * 1024)] }));
    expect(huge.status).to.equal(413);
    expect(await result(sim, 'ethereum-mainnet', 'eth_blockNumber')).to.match(/^0x[0-9a-f]+$/);
  });

  it('fails on request with x-sim-fault: error in each protocol, http500 as plain HTTP 500, unknown faults with 400', async () => {
    const call = { jsonrpc: '2.0', id: 5, method: 'eth_blockNumber' };
    const evm = await post(`${sim.url}/rpc/ethereum-mainnet`, call, { 'x-sim-fault': 'error' });
    expect(evm.status).to.equal(200);
    expect(await json(evm)).to.deep.equal({ jsonrpc: '2.0', id: 5, error: { code: -32603, message: 'simulated upstream failure (x-sim-fault: error)' } });
    const btc = await post(`${sim.url}/rpc/bitcoin-mainnet`, { jsonrpc: '1.0', id: 6, method: 'getblockcount' }, { 'x-sim-fault': 'error' });
    expect(btc.status).to.equal(500);
    expect((await json(btc)).error.code).to.equal(-1);
    const tron = await post(`${sim.url}/rpc/tron-mainnet/wallet/getnowblock`, {}, { 'x-sim-fault': 'error' });
    expect(tron.status).to.equal(200);
    expect(await json(tron)).to.deep.equal({ Error: 'simulated upstream failure (x-sim-fault: error)' });
    const http500 = await post(`${sim.url}/rpc/solana-devnet`, { jsonrpc: '2.0', id: 1, method: 'getSlot' }, { 'x-sim-fault': 'http500' });
    expect(http500.status).to.equal(500);
    expect(http500.headers.get('content-type')).to.match(/text\/plain/);
    const bad = await post(`${sim.url}/rpc/solana-devnet`, call, { 'x-sim-fault': 'explode' });
    expect(bad.status).to.equal(400);
  });

  it('x-sim-fault: timeout never answers: a short client deadline runs out, and the connection is closed unanswered after the hold', async () => {
    const url = `${sim.url}/rpc/ethereum-mainnet`;
    const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' };
    const t0 = Date.now();
    let aborted: unknown;
    try {
      await post(url, call, { 'x-sim-fault': 'timeout' }, AbortSignal.timeout(500));
    } catch (err) {
      aborted = err;
    }
    expect((aborted as Error | undefined)?.name, 'the client deadline, not an answer, ended the call').to.equal('TimeoutError');
    expect(Date.now() - t0).to.be.within(450, 1400);

    const t1 = Date.now();
    let closed: unknown;
    try {
      const res = await post(url, call, { 'x-sim-fault': 'timeout' });
      await res.text();
    } catch (err) {
      closed = err;
    }
    const held = Date.now() - t1;
    expect(closed, 'no answer, the connection was closed').to.be.instanceOf(Error);
    expect(held).to.be.within(1400, 5000);
    // The hold is per request: the next one is answered.
    expect(await result(sim, 'ethereum-mainnet', 'eth_chainId')).to.equal('0x1');
  });

  it('counts calls per network, method and outcome, and faults by kind, on /metrics', async () => {
    const res = await fetch(`${sim.opsUrl}/metrics`);
    const exposition = parsePrometheusText(await res.text());
    const calls = exposition.samples.filter((s) => s.name === 'chainpipe_upstream_sim_chain_calls_total');
    const find = (labels: Record<string, string>) => calls.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    expect(find({ network: 'ethereum-mainnet', method: 'eth_getTransactionByHash', outcome: 'ok' })?.value).to.be.greaterThan(0);
    expect(find({ network: 'bitcoin-mainnet', method: 'getrawtransaction', outcome: 'rpc_error' })?.value).to.be.greaterThan(0);
    expect(find({ network: 'tron-mainnet', method: 'wallet/getblockbynum', outcome: 'ok' })?.value).to.be.greaterThan(0);
    // Method names a client made up are not label values.
    expect(calls.some((s) => s.labels.method === 'eth_nothing' || s.labels.method === '__proto__')).to.equal(false);
    const faults = exposition.samples.filter((s) => s.name === 'chainpipe_upstream_sim_faults_total');
    expect(faults.map((s) => s.labels.kind).sort()).to.deep.equal(['error', 'http500', 'timeout']);
  });
});

describe('upstream-sim shutdown with requests held by the timeout fault', () => {
  it('closes held connections on SIGTERM and exits 0 long before the hold would end', async () => {
    const sim = await startSim({ SIM_FAULT_HOLD_MS: '60000' });
    const held = post(`${sim.url}/rpc/ethereum-mainnet`, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }, { 'x-sim-fault': 'timeout' }).then(
      () => 'answered',
      () => 'closed',
    );
    // The fault is counted as the request is taken into the hold.
    await waitFor(
      async () => {
        const samples = parsePrometheusText(await (await fetch(`${sim.opsUrl}/metrics`)).text()).samples;
        return samples.some((s) => s.name === 'chainpipe_upstream_sim_faults_total' && s.labels.kind === 'timeout' && s.value === 1);
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'the request held by the timeout fault' },
    );
    const t0 = Date.now();
    expect(await stopProcess(sim.proc)).to.equal(0);
    expect(Date.now() - t0).to.be.lessThan(10_000);
    expect(await held).to.equal('closed');
  });
});
