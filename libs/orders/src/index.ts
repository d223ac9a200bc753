export * from './state-machine';
export * from './fees';
export * from './refund';
export * from './order-creation';
export * from './execution';
export * from './fee-sweep';
export * from './deposit';
