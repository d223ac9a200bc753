export * from './deposit-keys';
export * from './config';
