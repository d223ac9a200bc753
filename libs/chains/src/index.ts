export * from './networks';
export * from './address';
export * from './rpc-client';
export * from './address-format';
export * from './origin-config';
