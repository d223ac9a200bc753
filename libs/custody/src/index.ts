export * from './deposit-keys';
export * from './config';
export * from './mnemonic';
export * from './signer';
export * from './evm-transaction';
export * from './outgoing-transfers';
export * from './thorchain-router';
