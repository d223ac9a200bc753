export * from './state-machine';
export * from './fees';
