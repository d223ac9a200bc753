export * from './state-machine';
export * from './fees';
export * from './refund';
export * from './order-creation';
