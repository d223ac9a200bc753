export * from './seed';
export * from './chain-types';
export * from './decimal';
export * from './pagination';
export * from './reference';
export * from './reference.repository';
