export * from './quote-store';
export * from './reference.repository';
export * from './reference-snapshot';
export * from './quote-history.repository';
