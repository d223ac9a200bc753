/**
 * Examples of the token price API document: Ethereum and its coins as the seed reference holds
 * them (libs/price/src/seed.ts). The contract tests check each against its schema.
 */
export const EXAMPLE_CHAIN = {
  id: 1,
  name: 'Ethereum',
  short_name: 'ETH',
  chain_id: 1,
  chain_type: 'evm',
  chain_icon_url: 'https://s2.coinmarketcap.com/static/img/coins/64x64/1027.png',
  explorer_url: 'https://etherscan.io',
};

export const EXAMPLE_TOKEN = {
  id: 2,
  name: 'USD Coin',
  symbol: 'USDC',
  decimals: 6,
  logo_url: 'https://s2.coinmarketcap.com/static/img/coins/64x64/3408.png',
  chain_id: 1,
  chain_name: 'Ethereum',
  contract_address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  is_native: false,
};

export const EXAMPLE_FIAT = { id: 1, code: 'USD', name: 'US Dollar', symbol: '$', precision: 2 };

export const EXAMPLE_LATEST_QUOTE = {
  token_id: 1,
  name: 'Ethereum',
  symbol: 'ETH',
  fiat_id: 1,
  fiat_code: 'USD',
  price: '3021.45',
  market_cap: '364706251380.12',
  volume_24h: '18250441120.5',
  volume_change_24h: '-4.21',
  percent_change_1h: '0.12',
  percent_change_24h: '-1.05',
  percent_change_7d: '3.8',
  percent_change_30d: '-7.42',
  fully_diluted_valuation: '364706251380.12',
  circulating_supply: '120705123.4',
  total_supply: '120705123.4',
  max_supply: '',
  last_updated: '2026-11-24T12:00:00.000Z',
};

export const EXAMPLE_ADDRESS_QUOTE = {
  token_id: 2,
  name: 'USD Coin',
  symbol: 'USDC',
  chain_type: 'evm',
  chain_id: 1,
  address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  external_id: '3408',
  price_usd: 0.99994,
  market_cap_usd: 73512044120.18,
  volume_24h_usd: 6120443800.4,
  percent_change_1h: 0.001,
  percent_change_24h: -0.004,
  percent_change_7d: 0.002,
  percent_change_30d: 0.01,
  last_updated: '2026-11-24T12:00:00.000Z',
  market_cap: 73512044120.18,
  fully_diluted_valuation: 73515120000.5,
  total_volume: 6120443800.4,
  circulating_supply: 73516454230.3,
  total_supply: 73516454230.3,
  max_supply: null,
};

const windows = <T>(value: T) => ({ m5: value, m15: value, m30: value, h1: value, h6: value, h24: value });

export const EXAMPLE_POOL_DETAIL = {
  id: 'eth_0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640',
  name: 'USDC / WETH 0.05%',
  address: '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640',
  network: 'eth',
  dex: 'uniswap_v3',
  pool_created_at: '2021-12-29T12:35:14Z',
  base_token: { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', name: 'USD Coin', symbol: 'USDC', image_url: 'https://coin-images.coingecko.com/coins/images/6319/small/usdc.png' },
  quote_token: { address: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', name: 'Wrapped Ether', symbol: 'WETH', image_url: 'https://coin-images.coingecko.com/coins/images/2518/small/weth.png' },
  base_token_price_usd: '0.99991',
  quote_token_price_usd: '3021.45',
  fdv_usd: '73515120000.5',
  market_cap_usd: null,
  price_change_percentage: windows('0.01'),
  volume_usd: windows('120441.2'),
  reserve_in_usd: '160231455.12',
  transactions: windows({ buys: 12, sells: 9, buyers: 10, sellers: 8 }),
};
