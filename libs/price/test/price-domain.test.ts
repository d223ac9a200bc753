import { expect } from 'chai';
import { base58Decode, isTronBase58, normalizeChainType } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import {
  SEED_CHAINS,
  SEED_FIATS,
  SEED_TOKENS,
  decimalString,
  fiatRateItems,
  latestQuoteItem,
  mapPoolDetail,
  parseCmcQuotes,
  parseFiatRates,
  parseTokenIds,
  positiveIntParam,
  rateString,
  usdFactor,
  type FiatRatesMessage,
} from '../src';

describe('price domain', () => {
  describe('seed', () => {
    it('has unique ids, every token on a seeded chain, one native coin per chain, EVM addresses of 20 bytes', () => {
      const unique = (xs: unknown[]) => new Set(xs).size === xs.length;
      expect(unique(SEED_CHAINS.map((c) => c.id))).to.equal(true);
      expect(unique(SEED_TOKENS.map((t) => t.id))).to.equal(true);
      expect(unique(SEED_FIATS.map((f) => f.id))).to.equal(true);
      expect(unique(SEED_FIATS.map((f) => f.code))).to.equal(true);
      for (const c of SEED_CHAINS) expect(SEED_TOKENS.filter((t) => t.chain === c.id && t.contract_address === null), c.name).to.have.length(1);
      const evm = new Set(SEED_CHAINS.filter((c) => c.chain_type === 'evm').map((c) => c.id));
      for (const t of SEED_TOKENS) {
        expect(SEED_CHAINS.some((c) => c.id === t.chain), t.symbol).to.equal(true);
        if (evm.has(t.chain) && t.contract_address) expect(t.contract_address, `${t.symbol}@${t.chain}`).to.match(/^0x[0-9a-fA-F]{40}$/);
      }
      for (const f of SEED_FIATS) expect(f.code).to.match(/^[A-Z]{3}$/);
    });

    it('has Tron addresses with valid Base58Check checksums and Solana mints of 32 bytes', () => {
      const ofType = (type: string) => SEED_TOKENS.filter((t) => t.contract_address && SEED_CHAINS.find((c) => c.id === t.chain)!.chain_type === type);
      for (const t of ofType('tvm')) expect(isTronBase58(t.contract_address!), t.symbol).to.equal(true);
      for (const t of ofType('svm')) expect(base58Decode(t.contract_address!)?.length, t.symbol).to.equal(32);
    });
  });

  describe('normalizeChainType', () => {
    it('maps the spec aliases in any case and refuses unknown names', () => {
      const cases: [string, string | undefined][] = [
        ['EVM', 'evm'], ['eth', 'evm'], ['Ethereum', 'evm'], ['sol', 'svm'], ['solana', 'svm'], ['trx', 'tvm'], ['tron', 'tvm'],
        ['btc', 'utxo'], ['bitcoin', 'utxo'], ['litecoin', 'utxo'], ['dogecoin', 'utxo'], ['bitcoin cash', 'utxo'], ['atom', 'cosmos'],
        ['sui', 'move'], ['aptos', 'move'], ['apt', 'move'], [' move ', 'move'], ['plasma', undefined], ['', undefined], ['constructor', undefined], ['__proto__', undefined], ['toString', undefined],
      ];
      for (const [input, out] of cases) expect(normalizeChainType(input), input).to.equal(out);
      expect(normalizeChainType(1)).to.equal(undefined);
    });
  });

  describe('decimal strings', () => {
    it('never uses exponent form and drops float noise', () => {
      expect(decimalString(1e-7)).to.equal('0.0000001');
      expect(decimalString(1.5e21)).to.equal('1500000000000000000000');
      expect(decimalString(0.1 + 0.2)).to.equal('0.3');
      expect(decimalString(64321.5)).to.equal('64321.5');
      expect(decimalString(-2.5)).to.equal('-2.5');
      expect(decimalString(0)).to.equal('0');
      expect(decimalString(null)).to.equal(null);
      expect(rateString(1 / 3)).to.equal('0.33333333');
    });
  });

  describe('request parameters', () => {
    it('reads ids and page/limit as the spec and docs/decisions.md (D8) say', () => {
      expect(parseTokenIds('3, 1,3,,2', 10)).to.deep.equal({ ok: true, ids: [3, 1, 2] });
      expect(parseTokenIds(undefined, 10)).to.deep.equal({ ok: false, error: 'ids is required' });
      expect(parseTokenIds(' , ', 10)).to.deep.equal({ ok: false, error: 'ids is required' });
      expect(parseTokenIds('1,x', 10).ok).to.equal(false);
      expect(parseTokenIds('1,2,3', 2).ok).to.equal(false);
      expect(positiveIntParam('limit', '5000', 100, 1000)).to.deep.equal({ ok: true, value: 1000 });
      expect(positiveIntParam('limit', undefined, 100, 1000)).to.deep.equal({ ok: true, value: 100 });
      expect(positiveIntParam('page', '0', 1).ok).to.equal(false);
      expect(positiveIntParam('page', '2.5', 1).ok).to.equal(false);
    });
  });

  describe('upstream payloads', () => {
    it('parses a quotes/latest answer, keeping the source timestamp and rejecting entries without a price', () => {
      const body = {
        status: { error_code: 0 },
        data: {
          '1': { id: 1, name: 'Bitcoin', symbol: 'BTC', max_supply: 21000000, circulating_supply: 19700000, total_supply: 19700000, last_updated: '2026-01-01T00:00:00.000Z', quote: { USD: { price: 65000.5, market_cap: 1.28e12, fully_diluted_market_cap: 1.365e12, last_updated: '2026-01-01T00:00:05.000Z' } } },
          '2': { id: 2, name: 'Broken', symbol: 'X', quote: { USD: { price: null, last_updated: '2026-01-01T00:00:00Z' } } },
        },
      };
      const r = parseCmcQuotes(body, 123);
      expect(r.rejected).to.deep.equal([{ id: '2', reason: 'no USD price' }]);
      expect(r.items).to.have.length(1);
      expect(r.items[0]).to.deep.include({ kind: 'crypto', external_id: '1', symbol: 'BTC', as_of: Date.parse('2026-01-01T00:00:05.000Z'), fetched_at: 123 });
      expect(r.items[0].usd).to.include({ price: 65000.5, fully_diluted_valuation: 1.365e12, max_supply: 21000000, volume_24h: null });
    });

    it('parses fiat rates and converts through them', () => {
      const m = parseFiatRates({ timestamp: 1700000000, base: 'USD', rates: { USD: 1, EUR: 0.9, JPY: 150, BAD: -1 } }, 5) as FiatRatesMessage;
      expect(m).to.deep.equal({ kind: 'fiat', source: 'openexchangerates', base: 'USD', as_of: 1700000000000, fetched_at: 5, rates: { USD: 1, EUR: 0.9, JPY: 150 } });
      expect(usdFactor('EUR', m)).to.equal(0.9);
      expect(usdFactor('USD', undefined)).to.equal(1);
      expect(usdFactor('GBP', m)).to.equal(undefined);
      const items = fiatRateItems('EUR', m, [{ id: 1, code: 'USD' }, { id: 2, code: 'EUR' }, { id: 3, code: 'JPY' }, { id: 4, code: 'GBP' }]);
      expect(items).to.deep.equal([
        // each with the rates' source time (the upstream's timestamp 1700000000)
        { target_fiat_id: 1, target_fiat_code: 'USD', rate: (1 / 0.9).toFixed(8), last_updated: '2023-11-14T22:13:20.000Z' },
        { target_fiat_id: 3, target_fiat_code: 'JPY', rate: (150 / 0.9).toFixed(8), last_updated: '2023-11-14T22:13:20.000Z' },
      ]);
      expect(fiatRateItems('GBP', m, [{ id: 1, code: 'USD' }])).to.deep.equal([]);
      const item = latestQuoteItem({ id: 7, name: 'Bitcoin', symbol: 'BTC' }, { id: 2, code: 'EUR' }, { price: 100, market_cap: 1000, percent_change_24h: 1.5, max_supply: null }, 0.9, 1700000000000);
      expect(item).to.include({ price: '90', market_cap: '900', percent_change_24h: '1.5', max_supply: '', volume_24h: '', last_updated: '2023-11-14T22:13:20.000Z' });
    });

    it('maps the GeckoTerminal pool detail fixture to the spec pool fields', () => {
      const answer = readFixtureJson('upstream/coingecko-oas-example.onchain_networks_eth_pools_address.json');
      const d = mapPoolDetail('eth', answer);
      expect(d).to.include({ id: 'eth_0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640', name: 'WETH / USDC 0.05%', network: 'eth', dex: 'uniswap_v3', base_token_price_usd: '2087.83402802406', fdv_usd: '4706830691.85796', reserve_in_usd: '99194225.032' });
      expect(d.base_token.symbol).to.equal('WETH');
      expect(d.quote_token).to.include({ symbol: 'USDC', address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' });
      expect(d.transactions.m5).to.deep.equal({ buys: 13, sells: 10, buyers: 11, sellers: 9 });
      expect(() => mapPoolDetail('eth', { errors: [] })).to.throw('no pool');
      // A list entry without every window: the missing ones are "0", token fields without included data are "".
      const sparse = readFixtureJson('upstream/geckoterminal.networks_pools_top.json').data[0];
      const m = mapPoolDetail('eth', { data: sparse });
      expect(m.volume_usd.m5).to.equal('0');
      expect(m.market_cap_usd).to.equal(null);
      expect(m.base_token).to.deep.equal({ address: '', name: '', symbol: '', image_url: '' });
    });
  });
});
