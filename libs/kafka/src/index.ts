export * from './config';
export * from './client';
export * from './producer';
export * from './consumer';
export * from './offsets';
export * from './service';
export * from './broker-link';
export * from './handler-retry';
