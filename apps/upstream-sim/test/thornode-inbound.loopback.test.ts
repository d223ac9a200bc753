import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { systemClock } from '@chainpipe/runtime';
import { QuotesSource } from '../src/market/quotes-source';
import { thornodeRouter } from '../src/swaps/thornode-router';
import { ThorchainSim } from '../src/swaps/thorchain-sim';

describe('THORNode stand-in: inbound addresses and halts', () => {
  let server: Server;
  let base = '';

  before(async () => {
    const app = express();
    app.use(thornodeRouter({ thorchain: new ThorchainSim({ quotes: new QuotesSource({ clock: systemClock, random: Math.random }), now: Date.now, swapMs: 0 }), now: Date.now }));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: (await res.json()) as any };
  };
  const halt = (chain: string, halted: unknown) => fetch(`${base}/sim/thorchain/halt/${chain}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ halted }) });
  const quote = '/thornode/thorchain/quote/swap?from_asset=ETH.ETH&to_asset=BTC.BTC&amount=100000000&destination=bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

  it("lists every chain's vault: the quote's inbound_address and router, no halt", async () => {
    const q = await get(quote);
    expect(q.status).to.equal(200);
    const inbound = await get('/thornode/thorchain/inbound_addresses');
    expect(inbound.status).to.equal(200);
    const eth = inbound.body.find((v: any) => v.chain === 'ETH');
    expect(eth).to.include({ address: q.body.inbound_address, router: q.body.router, halted: false, chain_trading_paused: false, global_trading_paused: false });
    const btc = inbound.body.find((v: any) => v.chain === 'BTC');
    expect(btc.address).to.match(/^bc1/);
    expect(btc).to.not.have.property('router');
  });

  it("a halted chain says so and refuses quotes with THORNode's error, until resumed", async () => {
    expect((await halt('eth', true)).status).to.equal(200);
    const inbound = await get('/thornode/thorchain/inbound_addresses');
    expect(inbound.body.find((v: any) => v.chain === 'ETH')).to.include({ halted: true, chain_trading_paused: true });
    expect(inbound.body.find((v: any) => v.chain === 'BTC')).to.include({ halted: false });
    const refused = await get(quote);
    expect(refused).to.deep.equal({ status: 400, body: { code: 3, message: "trading is halted, can't process swap", details: [] } });
    expect((await halt('ETH', false)).status).to.equal(200);
    expect((await get(quote)).status).to.equal(200);
    expect((await halt('DOGE', true)).status).to.equal(400);
    expect((await halt('ETH', 'yes')).status).to.equal(400);
  });
});
