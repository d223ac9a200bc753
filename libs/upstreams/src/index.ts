export * from './http';
export * from './json-rpc';
