export * from './networks';
export * from './address';
export * from './address-format';
export * from './origin-config';
export * from './tx-hash';
