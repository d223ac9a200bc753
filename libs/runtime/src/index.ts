export * from './config';
export * from './logger';
export * from './errors';
export * from './metrics';
export * from './lifecycle';
export * from './base-config';
export * from './boot';
export * from './secret-box';
