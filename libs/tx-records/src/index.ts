export * from './records';
export * from './pool-trades';
