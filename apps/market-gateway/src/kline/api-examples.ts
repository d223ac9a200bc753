/** Examples of the candlestick API document; the contract tests check each against its schema. */
export const EXAMPLE_POOL = {
  id: 1,
  chain_type: 'evm',
  chain_id: 1,
  network_id: 'eth',
  pool_address: '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640',
  token: 'base',
  dex_id: 'uniswap_v3',
  label: 'USDC/WETH 0.05%',
  is_active: true,
  created_at: '2026-11-24T10:00:00.000Z',
  updated_at: '2026-11-24T10:05:00.000Z',
};

export const EXAMPLE_CANDLES = [
  { pool_id: 1, interval: '1m', open_time: 1764000000, open: 3021.4, high: 3023.9, low: 3020.8, close: 3022.1, volume: 15230.5 },
  { pool_id: 1, interval: '1m', open_time: 1764000060, open: 3022.1, high: 3022.1, low: 3019.7, close: 3020.2, volume: null },
];
