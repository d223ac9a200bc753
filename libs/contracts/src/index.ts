export * from './schemas';
export * from './topics';
export * from './bundle';
export * from './generated/types';
export * from './asyncapi';
export * from './channels';
