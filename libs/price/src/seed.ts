import type { StandardChainType } from '@chainpipe/chains';

/**
 * The reference data every service shares: chains, tokens and fiat currencies, with fixed ids.
 * The aggregator's token ids and the candlestick pools point at these ids, so an id, once
 * published here, never changes meaning: new entries get new ids, nothing is renumbered.
 * Ids of operator imports come from sequences starting above the seed ranges (chains 1000,
 * tokens 100000, fiats 1000).
 *
 * Sources (public, verifiable): contract addresses and decimals as published by the issuers and
 * shown on each chain's explorer; chain ids from chainlist (EIP-155) and this project's decision
 * for non-EVM mainnets (Solana, Tron and Bitcoin are 1, as in the address monitoring service;
 * Aptos mainnet's own chain id is 1); `external_id` is the CoinMarketCap id of the asset (the
 * quotes source's key); GeckoTerminal network ids for pool look-ups; fiat codes, names and minor
 * units from ISO 4217.
 */


export interface SeedChain {
  id: number;
  name: string;
  short_name: string;
  /** Protocol chain id; null where the chain has no integer one (Cosmos Hub's is `cosmoshub-4`, Sui's a digest). */
  chain_id: number | null;
  chain_type: StandardChainType;
  /** CoinMarketCap id of the native coin: the icon follows it. */
  native_cmc_id: number;
  explorer_url: string;
  /** GeckoTerminal network id (pool detail); null where it lists no DEX pools. */
  gecko_network: string | null;
}

export interface SeedToken {
  id: number;
  chain: number;
  name: string;
  symbol: string;
  decimals: number;
  /** null for the chain's native coin. */
  contract_address: string | null;
  /** CoinMarketCap id: the quote this token is priced by. */
  external_id: string;
}

export interface SeedFiat {
  id: number;
  code: string;
  name: string;
  symbol: string;
  /** ISO 4217 minor units. */
  precision: number;
}

export const cmcIconUrl = (cmcId: number | string): string => `https://s2.coinmarketcap.com/static/img/coins/64x64/${cmcId}.png`;

export const SEED_CHAINS: readonly SeedChain[] = [
  { id: 1, name: 'Ethereum', short_name: 'ETH', chain_id: 1, chain_type: 'evm', native_cmc_id: 1027, explorer_url: 'https://etherscan.io', gecko_network: 'eth' },
  { id: 2, name: 'BNB Smart Chain', short_name: 'BSC', chain_id: 56, chain_type: 'evm', native_cmc_id: 1839, explorer_url: 'https://bscscan.com', gecko_network: 'bsc' },
  { id: 3, name: 'Polygon', short_name: 'POL', chain_id: 137, chain_type: 'evm', native_cmc_id: 28321, explorer_url: 'https://polygonscan.com', gecko_network: 'polygon_pos' },
  { id: 4, name: 'Arbitrum One', short_name: 'ARB', chain_id: 42161, chain_type: 'evm', native_cmc_id: 1027, explorer_url: 'https://arbiscan.io', gecko_network: 'arbitrum' },
  { id: 5, name: 'OP Mainnet', short_name: 'OP', chain_id: 10, chain_type: 'evm', native_cmc_id: 1027, explorer_url: 'https://optimistic.etherscan.io', gecko_network: 'optimism' },
  { id: 6, name: 'Base', short_name: 'BASE', chain_id: 8453, chain_type: 'evm', native_cmc_id: 1027, explorer_url: 'https://basescan.org', gecko_network: 'base' },
  { id: 7, name: 'Avalanche C-Chain', short_name: 'AVAX', chain_id: 43114, chain_type: 'evm', native_cmc_id: 5805, explorer_url: 'https://snowtrace.io', gecko_network: 'avax' },
  { id: 8, name: 'Solana', short_name: 'SOL', chain_id: 1, chain_type: 'svm', native_cmc_id: 5426, explorer_url: 'https://solscan.io', gecko_network: 'solana' },
  { id: 9, name: 'Tron', short_name: 'TRX', chain_id: 1, chain_type: 'tvm', native_cmc_id: 1958, explorer_url: 'https://tronscan.org', gecko_network: 'tron' },
  { id: 10, name: 'Bitcoin', short_name: 'BTC', chain_id: 1, chain_type: 'utxo', native_cmc_id: 1, explorer_url: 'https://mempool.space', gecko_network: null },
  { id: 11, name: 'Cosmos Hub', short_name: 'ATOM', chain_id: null, chain_type: 'cosmos', native_cmc_id: 3794, explorer_url: 'https://www.mintscan.io/cosmos', gecko_network: null },
  { id: 12, name: 'Sui', short_name: 'SUI', chain_id: null, chain_type: 'move', native_cmc_id: 20947, explorer_url: 'https://suivision.xyz', gecko_network: 'sui-network' },
  { id: 13, name: 'Aptos', short_name: 'APT', chain_id: 1, chain_type: 'move', native_cmc_id: 21794, explorer_url: 'https://explorer.aptoslabs.com', gecko_network: 'aptos' },
];

const t = (id: number, chain: number, symbol: string, name: string, decimals: number, contract_address: string | null, external_id: number): SeedToken => ({
  id,
  chain,
  name,
  symbol,
  decimals,
  contract_address,
  external_id: String(external_id),
});

/** Token ids: the chain's id × 100 + n (native coin first), so a chain's block stays readable. */
export const SEED_TOKENS: readonly SeedToken[] = [
  // Ethereum
  t(101, 1, 'ETH', 'Ethereum', 18, null, 1027),
  t(102, 1, 'USDT', 'Tether USD', 6, '0xdAC17F958D2ee523a2206206994597C13D831ec7', 825),
  t(103, 1, 'USDC', 'USD Coin', 6, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 3408),
  t(104, 1, 'WETH', 'Wrapped Ether', 18, '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', 2396),
  t(105, 1, 'WBTC', 'Wrapped BTC', 8, '0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599', 3717),
  t(106, 1, 'DAI', 'Dai Stablecoin', 18, '0x6B175474E89094C44Da98b954EedeAC495271d0F', 4943),
  t(107, 1, 'LINK', 'ChainLink Token', 18, '0x514910771AF9Ca656af840dff83E8264EcF986CA', 1975),
  t(108, 1, 'UNI', 'Uniswap', 18, '0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984', 7083),
  // BNB Smart Chain (Binance-Peg tokens carry 18 decimals there)
  t(201, 2, 'BNB', 'BNB', 18, null, 1839),
  t(202, 2, 'USDT', 'Tether USD', 18, '0x55d398326f99059fF775485246999027B3197955', 825),
  t(203, 2, 'USDC', 'USD Coin', 18, '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 3408),
  t(204, 2, 'WBNB', 'Wrapped BNB', 18, '0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c', 7192),
  t(205, 2, 'ETH', 'Binance-Peg Ethereum Token', 18, '0x2170Ed0880ac9A755fd29B2688956BD959F933F8', 1027),
  t(206, 2, 'BTCB', 'Binance-Peg BTCB Token', 18, '0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c', 4023),
  // Polygon
  t(301, 3, 'POL', 'Polygon Ecosystem Token', 18, null, 28321),
  t(302, 3, 'USDT', 'Tether USD', 6, '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', 825),
  t(303, 3, 'USDC', 'USD Coin', 6, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 3408),
  t(304, 3, 'WETH', 'Wrapped Ether', 18, '0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619', 2396),
  t(305, 3, 'WBTC', 'Wrapped BTC', 8, '0x1BFD67037B42Cf73acF2047067bd4F2C47D9BfD6', 3717),
  // Arbitrum One
  t(401, 4, 'ETH', 'Ethereum', 18, null, 1027),
  t(402, 4, 'USDT', 'Tether USD', 6, '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', 825),
  t(403, 4, 'USDC', 'USD Coin', 6, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 3408),
  t(404, 4, 'WETH', 'Wrapped Ether', 18, '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1', 2396),
  t(405, 4, 'WBTC', 'Wrapped BTC', 8, '0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f', 3717),
  t(406, 4, 'ARB', 'Arbitrum', 18, '0x912CE59144191C1204E64559FE8253a0e49E6548', 11841),
  // OP Mainnet
  t(501, 5, 'ETH', 'Ethereum', 18, null, 1027),
  t(502, 5, 'USDT', 'Tether USD', 6, '0x94b008aA00579c1307B0EF2c499aD98a8ce58e58', 825),
  t(503, 5, 'USDC', 'USD Coin', 6, '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', 3408),
  t(504, 5, 'WETH', 'Wrapped Ether', 18, '0x4200000000000000000000000000000000000006', 2396),
  t(505, 5, 'OP', 'Optimism', 18, '0x4200000000000000000000000000000000000042', 11840),
  // Base
  t(601, 6, 'ETH', 'Ethereum', 18, null, 1027),
  t(602, 6, 'USDC', 'USD Coin', 6, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 3408),
  t(603, 6, 'WETH', 'Wrapped Ether', 18, '0x4200000000000000000000000000000000000006', 2396),
  t(604, 6, 'cbBTC', 'Coinbase Wrapped BTC', 8, '0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf', 32994),
  // Avalanche C-Chain
  t(701, 7, 'AVAX', 'Avalanche', 18, null, 5805),
  t(702, 7, 'USDC', 'USD Coin', 6, '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', 3408),
  t(703, 7, 'USDT', 'TetherToken', 6, '0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7', 825),
  // Solana (SPL mints)
  t(801, 8, 'SOL', 'Solana', 9, null, 5426),
  t(802, 8, 'USDC', 'USD Coin', 6, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 3408),
  t(803, 8, 'USDT', 'USDT', 6, 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', 825),
  t(804, 8, 'wSOL', 'Wrapped SOL', 9, 'So11111111111111111111111111111111111111112', 16116),
  // Tron (TRC-20)
  t(901, 9, 'TRX', 'TRON', 6, null, 1958),
  t(902, 9, 'USDT', 'Tether USD', 6, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 825),
  t(903, 9, 'USDC', 'USD Coin', 6, 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', 3408),
  // Bitcoin, Cosmos Hub
  t(1001, 10, 'BTC', 'Bitcoin', 8, null, 1),
  t(1101, 11, 'ATOM', 'Cosmos', 6, null, 3794),
  // Sui (coin types), Aptos
  t(1201, 12, 'SUI', 'Sui', 9, null, 20947),
  t(1202, 12, 'USDC', 'USD Coin', 6, '0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC', 3408),
  t(1301, 13, 'APT', 'Aptos Coin', 8, null, 21794),
];

const f = (id: number, code: string, name: string, symbol: string, precision = 2): SeedFiat => ({ id, code, name, symbol, precision });

export const SEED_FIATS: readonly SeedFiat[] = [
  f(1, 'USD', 'US Dollar', '$'),
  f(2, 'EUR', 'Euro', '€'),
  f(3, 'JPY', 'Yen', '¥', 0),
  f(4, 'GBP', 'Pound Sterling', '£'),
  f(5, 'CNY', 'Yuan Renminbi', '¥'),
  f(6, 'KRW', 'Won', '₩', 0),
  f(7, 'INR', 'Indian Rupee', '₹'),
  f(8, 'CAD', 'Canadian Dollar', 'C$'),
  f(9, 'AUD', 'Australian Dollar', 'A$'),
  f(10, 'CHF', 'Swiss Franc', 'CHF'),
  f(11, 'HKD', 'Hong Kong Dollar', 'HK$'),
  f(12, 'SGD', 'Singapore Dollar', 'S$'),
  f(13, 'TWD', 'New Taiwan Dollar', 'NT$'),
  f(14, 'BRL', 'Brazilian Real', 'R$'),
  f(15, 'RUB', 'Russian Ruble', '₽'),
  f(16, 'TRY', 'Turkish Lira', '₺'),
  f(17, 'MXN', 'Mexican Peso', 'MX$'),
  f(18, 'ZAR', 'Rand', 'R'),
  f(19, 'SEK', 'Swedish Krona', 'kr'),
  f(20, 'NOK', 'Norwegian Krone', 'kr'),
  f(21, 'DKK', 'Danish Krone', 'kr'),
  f(22, 'PLN', 'Zloty', 'zł'),
  f(23, 'CZK', 'Czech Koruna', 'Kč'),
  f(24, 'HUF', 'Forint', 'Ft'),
  f(25, 'THB', 'Baht', '฿'),
  f(26, 'IDR', 'Rupiah', 'Rp'),
  f(27, 'VND', 'Dong', '₫', 0),
  f(28, 'PHP', 'Philippine Peso', '₱'),
  f(29, 'MYR', 'Malaysian Ringgit', 'RM'),
  f(30, 'NZD', 'New Zealand Dollar', 'NZ$'),
  f(31, 'AED', 'UAE Dirham', 'د.إ'),
  f(32, 'SAR', 'Saudi Riyal', '﷼'),
  f(33, 'ILS', 'New Israeli Sheqel', '₪'),
  f(34, 'UAH', 'Hryvnia', '₴'),
  f(35, 'ARS', 'Argentine Peso', 'AR$'),
  f(36, 'NGN', 'Naira', '₦'),
  f(37, 'KWD', 'Kuwaiti Dinar', 'KD', 3),
  f(38, 'BHD', 'Bahraini Dinar', 'BD', 3),
];

/** First id of operator-imported rows: above every seed id, present and future. */
export const IMPORT_ID_START = { chains: 1000, tokens: 100000, fiats: 1000 } as const;
