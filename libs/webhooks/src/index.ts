export * from './target';
export * from './sign';
export * from './schedule';
export * from './sender';
export * from './trust-config';
export * from './queue-state';
export * from './dispatcher';
export * from './queue-metrics';
