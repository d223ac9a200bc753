export * from './catalog';
export * from './networks';
export * from './chain-types';
export * from './address';
export * from './address-format';
export * from './origin-config';
export * from './tx-hash';
export * from './tron-transaction';
