export * from './quote-store';
export * from './reference.repository';
