export * from './intervals';
export * from './candles';
export * from './candle-messages';
export * from './pools';
export * from './ohlcv-query';
export * from './ws-protocol';
export * from './upstream-protocol';
export * from './subscription-plan';
