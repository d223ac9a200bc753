export * from './networks';
export * from './address';
export * from './rpc-client';
