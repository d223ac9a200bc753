export * from './integrators.repository';
export * from './orders.repository';
export * from './outgoing-transfers.repository';
export * from './deposits.repository';
export * from './channels.repository';
