export * from './client';
export * from './service';
export * from './connection-cap';
export * from './pipeline';
