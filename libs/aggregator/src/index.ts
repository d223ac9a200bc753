export * from './adapter';
export * from './units';
export * from './quote-math';
export * from './changenow';
export * from './config';
export * from './thorchain';
