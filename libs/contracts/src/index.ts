export * from './schemas';
export * from './topics';
