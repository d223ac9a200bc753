export * from './client';
export * from './service';
