export * from './envelope';
export * from './errors';
export * from './app';
export * from './api-keys';
export * from './validation';
export * from './service';
