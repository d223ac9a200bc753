export * from './state-machine';
export * from './fees';
export * from './refund';
