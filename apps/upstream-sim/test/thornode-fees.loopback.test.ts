import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { stringToHex } from 'viem';
import { QuotesSource } from '../src/market/quotes-source';
import { thornodeRouter } from '../src/swaps/thornode-router';
import { ThorchainSim } from '../src/swaps/thorchain-sim';

const DEST = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

describe('THORNode stand-in: outbound fees that follow gas, minimums that move, vaults that churn', () => {
  let server: Server;
  let base = '';
  let thor: ThorchainSim;
  const now = 1_800_000_000_000;

  beforeEach(async () => {
    const quotes = new QuotesSource({ clock: { now: () => now }, random: () => 0.5 });
    thor = new ThorchainSim({ quotes, now: () => now, swapMs: 0 });
    const app = express();
    app.use(thornodeRouter({ thorchain: thor, now: () => now }));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: (await res.json()) as any };
  };
  const send = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const quote = (amount: bigint, from = 'ETH.ETH', to = 'BTC.BTC') => get(`/thornode/thorchain/quote/swap?from_asset=${from}&to_asset=${to}&amount=${amount}&destination=${DEST}`);
  const inbound = async (chain: string) => (await get('/thornode/thorchain/inbound_addresses')).body.find((v: any) => v.chain === chain);
  /** 1e8 units of `from` valued in `to` at the stand-in's prices (the quotes it was told). */
  const value = (amount: bigint, from: string, to: string) => (amount * BigInt(Math.round((thor.priceUsd(from)! / thor.priceUsd(to)!) * 1e12))) / 10n ** 12n;

  it("charges each chain's outbound fee, gas rate × outbound size × 1.5: 15 000 sat at Bitcoin's 10 sat/vB, 0.00045 ETH at 3 gwei; the quote's output is net of it", async () => {
    expect(await inbound('BTC')).to.include({ gas_rate: '10', outbound_tx_size: '1000', outbound_fee: '15000' });
    expect(await inbound('ETH')).to.include({ gas_rate: '3', gas_rate_units: 'gwei', outbound_tx_size: '100000', outbound_fee: '45000' });
    const q = await quote(100_000_000n);
    expect(q.status).to.equal(200);
    expect(q.body.fees).to.include({ asset: 'BTC.BTC', outbound: '15000' });
    const gross = value(100_000_000n, 'ETH.ETH', 'BTC.BTC');
    const liquidity = (gross * 35n) / 10_000n;
    expect(q.body.fees).to.include({ liquidity: liquidity.toString(), total: (liquidity + 15_000n).toString() });
    expect(q.body.expected_amount_out).to.equal((gross - liquidity - 15_000n).toString());
  });

  it('recommended_min_amount_in is four times the larger outbound fee in the source asset, and rises with gas: an amount fine before is refused after', async () => {
    const before = await quote(100_000_000n);
    const expected = 4n * [45_000n, value(15_000n, 'BTC.BTC', 'ETH.ETH')].reduce((a, b) => (a > b ? a : b));
    expect(before.body.recommended_min_amount_in).to.equal(expected.toString());

    // an amount at a third of the minimum: quoted now (over a quarter), refused once Bitcoin's gas is ten times as high
    const amount = expected / 3n;
    expect((await quote(amount)).status).to.equal(200);
    expect(await send('PUT', '/sim/thorchain/gas/BTC', { gas_rate: 100 })).to.deep.include({ status: 200, body: { chain: 'BTC', gas_rate: 100, outbound_fee: '150000' } });
    const risen = 4n * value(150_000n, 'BTC.BTC', 'ETH.ETH');
    const refused = await quote(amount);
    expect(refused).to.deep.equal({ status: 400, body: { code: 3, message: `amount less than min swap amount (recommended_min_amount_in: ${risen}): invalid request`, details: [] } });
    expect((await send('PUT', '/sim/thorchain/gas/DOGE', { gas_rate: 1 })).status).to.equal(400);
    expect((await send('PUT', '/sim/thorchain/gas/BTC', { gas_rate: -1 })).status).to.equal(400);
  });

  it('gas moves on its own by at most 25 % a step and back toward its start, never under it', () => {
    thor.moveGas(() => 0.999);
    // 10 × 1.25 = 12.5, a quarter of the way back to 10: 11.875
    expect(thor.gasRateOf('BTC')).to.be.within(11.85, 11.9);
    for (let i = 0; i < 200; i++) thor.moveGas(() => 0.999);
    // rising every step it settles where the pull back matches the rise: 2.5 / (1 − 0.75 × 1.25) = 40
    expect(thor.gasRateOf('BTC')).to.be.within(39, 40.01);
    for (let i = 0; i < 30; i++) thor.moveGas(() => 0);
    expect(thor.gasRateOf('BTC'), 'floored at the start rate').to.equal(10);
  });

  it('a churn gives the chain a new vault (the router stays); a deposit to the retired one is refunded, one to the new one swapped', async () => {
    const old = await inbound('ETH');
    const btcBefore = (await inbound('BTC')).address;
    const churned = await send('POST', '/sim/thorchain/churn', { chains: ['eth'] });
    expect(churned.status).to.equal(200);
    expect(churned.body).to.deep.equal([{ chain: 'ETH', retired: old.address, address: churned.body[0].address }]);
    const current = await inbound('ETH');
    expect(current.address).to.equal(churned.body[0].address).and.not.equal(old.address);
    expect(current.router).to.equal(old.router);
    expect((await inbound('BTC')).address, 'other chains keep theirs').to.equal(btcBefore);
    expect((await quote(100_000_000n)).body.inbound_address).to.equal(current.address);

    const memo = stringToHex(`=:BTC.BTC:${DEST}:1`);
    const deposit = (hash: string, to: string) => ({ hash, to, value: '0xde0b6b3a7640000', input: memo });
    const [retiredHash, currentHash] = ['0x' + 'aa'.repeat(32), '0x' + 'bb'.repeat(32)];
    thor.observeBlock('ethereum-mainnet', { transactions: [deposit(retiredHash, old.address), deposit(currentHash, current.address)] }, [{ status: '0x1', logs: [] }, { status: '0x1', logs: [] }]);
    const observed = thor.observedSwaps();
    expect(observed.find((o) => o.hash === 'AA'.repeat(32))).to.include({ outcome: 'refunded', reason: 'vault retired' });
    expect(observed.find((o) => o.hash === 'BB'.repeat(32))).to.include({ outcome: 'done' });
    expect((await send('POST', '/sim/thorchain/churn', { chains: ['DOGE'] })).status).to.equal(400);
  });
});
