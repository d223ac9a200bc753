import { RandomWalk, type WalkDrivers } from './random-walk';

/**
 * A quotes source speaking CoinMarketCap's `GET /v2/cryptocurrency/quotes/latest?id=…&convert=USD`
 * (https://coinmarketcap.com/api/documentation/v1/#operation/getV2CryptocurrencyQuotesLatest):
 * `{status, data: {"<id>": {id, name, symbol, slug, max_supply, circulating_supply,
 * total_supply, last_updated, quote: {USD: {price, volume_24h, …, last_updated}}}}}`.
 * Starting values are round figures of the assets' real order of magnitude; prices then walk.
 */

interface Asset {
  name: string;
  symbol: string;
  slug: string;
  price: number;
  circulating: number;
  total: number;
  max: number | null;
}

const a = (name: string, symbol: string, price: number, circulating: number, total = circulating, max: number | null = null): Asset => ({
  name,
  symbol,
  slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
  price,
  circulating,
  total,
  max,
});

/** CoinMarketCap ids of the seeded assets (libs/price/src/seed.ts). */
const KNOWN: Record<string, Asset> = {
  '1': a('Bitcoin', 'BTC', 65000, 19_700_000, 19_700_000, 21_000_000),
  '1027': a('Ethereum', 'ETH', 3000, 120_000_000),
  '825': a('Tether USDt', 'USDT', 1, 120_000_000_000),
  '3408': a('USDC', 'USDC', 1, 35_000_000_000),
  '1839': a('BNB', 'BNB', 580, 146_000_000, 146_000_000, 200_000_000),
  '5426': a('Solana', 'SOL', 150, 465_000_000, 580_000_000),
  '1958': a('TRON', 'TRX', 0.16, 87_000_000_000),
  '3717': a('Wrapped Bitcoin', 'WBTC', 65000, 150_000),
  '4943': a('Dai', 'DAI', 1, 5_300_000_000),
  '1975': a('Chainlink', 'LINK', 14, 608_000_000, 1_000_000_000, 1_000_000_000),
  '7083': a('Uniswap', 'UNI', 8, 600_000_000, 1_000_000_000, 1_000_000_000),
  '28321': a('POL (ex-MATIC)', 'POL', 0.4, 10_000_000_000),
  '11841': a('Arbitrum', 'ARB', 0.6, 3_600_000_000, 10_000_000_000, 10_000_000_000),
  '11840': a('Optimism', 'OP', 1.5, 1_200_000_000, 4_294_967_296, 4_294_967_296),
  '5805': a('Avalanche', 'AVAX', 25, 400_000_000, 445_000_000, 720_000_000),
  '3794': a('Cosmos', 'ATOM', 6, 390_000_000),
  '20947': a('Sui', 'SUI', 1.5, 2_800_000_000, 10_000_000_000, 10_000_000_000),
  '21794': a('Aptos', 'APT', 7, 500_000_000, 1_100_000_000),
  '2396': a('WETH', 'WETH', 3000, 3_000_000),
  '4023': a('Bitcoin BEP2', 'BTCB', 65000, 60_000),
  '7192': a('Wrapped BNB', 'WBNB', 580, 1_300_000),
  '16116': a('Wrapped Solana', 'SOL', 150, 10_000_000),
  '32994': a('Coinbase Wrapped BTC', 'CBBTC', 65000, 40_000),
};

/** An id nobody seeded still gets a stable asset, as the real source knows thousands. */
function generated(id: string): Asset {
  const n = Number(id);
  return a(`Asset ${id}`, `A${id}`, 0.5 + (n % 997) / 10, 1_000_000 * (1 + (n % 89)));
}

export class QuotesSource {
  private readonly walks = new Map<string, RandomWalk>();

  constructor(private readonly drivers: WalkDrivers) {}

  private walk(id: string): RandomWalk {
    let w = this.walks.get(id);
    if (!w) {
      w = new RandomWalk((KNOWN[id] ?? generated(id)).price, { volatility: 0.002, stepMs: 1000, ...this.drivers });
      this.walks.set(id, w);
    }
    return w;
  }

  /** Publishes a fixed price for an asset (until `unpin`): what a test then expects downstream. */
  pin(id: string, price: number): void {
    this.walk(id).pin(price);
  }

  unpin(id: string): void {
    this.walk(id).unpin();
  }

  /** The `data[id]` object of a quotes/latest answer. */
  quote(id: string): Record<string, unknown> {
    const asset = KNOWN[id] ?? generated(id);
    const { value: price, at } = this.walk(id).read();
    const lastUpdated = new Date(at).toISOString();
    const marketCap = price * asset.circulating;
    const drift = (price / asset.price - 1) * 100;
    return {
      id: Number(id),
      name: asset.name,
      symbol: asset.symbol,
      slug: asset.slug,
      num_market_pairs: 1000,
      date_added: '2013-04-28T00:00:00.000Z',
      tags: [],
      max_supply: asset.max,
      circulating_supply: asset.circulating,
      total_supply: asset.total,
      is_active: 1,
      infinite_supply: asset.max === null,
      platform: null,
      cmc_rank: null,
      is_fiat: 0,
      self_reported_circulating_supply: null,
      self_reported_market_cap: null,
      tvl_ratio: null,
      last_updated: lastUpdated,
      quote: {
        USD: {
          price,
          volume_24h: marketCap * 0.03,
          volume_change_24h: drift * 3,
          percent_change_1h: drift / 24,
          percent_change_24h: drift,
          percent_change_7d: drift * 2,
          percent_change_30d: drift * 4,
          percent_change_60d: drift * 5,
          percent_change_90d: drift * 6,
          market_cap: marketCap,
          market_cap_dominance: 0,
          fully_diluted_market_cap: price * (asset.max ?? asset.total),
          tvl: null,
          last_updated: lastUpdated,
        },
      },
    };
  }

  /** The whole answer for a list of ids, as the source's envelope. */
  answer(ids: string[]): Record<string, unknown> {
    const data: Record<string, unknown> = {};
    for (const id of ids) data[id] = this.quote(id);
    return { status: status(this.drivers.clock.now(), 0, null, ids.length), data };
  }
}

export function status(now: number, errorCode: number, errorMessage: string | null, credits = 0): Record<string, unknown> {
  return { timestamp: new Date(now).toISOString(), error_code: errorCode, error_message: errorMessage, elapsed: 1, credit_count: credits, notice: null };
}
