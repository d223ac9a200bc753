export * from './config';
export * from './db';
export * from './api-keys.repository';
export * from './service';
export * from './statements';
export * from './binary-arrays';
export * from './copy-from';
