export * from './pools.repository';
export * from './candles.repository';
export * from './redis-state';
