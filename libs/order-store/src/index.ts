export * from './integrators.repository';
export * from './orders.repository';
