// The pure parts (also `@chainpipe/runtime/pure`), then the logger, metrics and the service kit.
export * from './pure';
export * from './logger';
export * from './metrics';
export * from './lifecycle';
export * from './base-config';
export * from './boot';
export * from './secret-box';
export * from './service';
export * from './periodic';
export * from './refreshed-value';
