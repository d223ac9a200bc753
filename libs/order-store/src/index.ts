export * from './integrators.repository';
