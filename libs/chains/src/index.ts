export * from './networks';
export * from './address';
