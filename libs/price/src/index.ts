export * from './seed';
export * from './decimal';
export * from './pagination';
export * from './reference';
export * from './quotes';
export * from './quote-items';
export * from './pool-detail';
export * from './reference-import';
