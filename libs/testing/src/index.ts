export * from './fixtures';
export * from './env';
export * from './wait';
export * from './prometheus';
export * from './processes';
export * from './kafka';
export * from './http';
export * from './fuzz';
