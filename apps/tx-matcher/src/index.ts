/** What benchmarks and tests use in-process: the monitored-address index and the match of records against it. */
export { AddressIndex } from './address-index';
export { matchRecords, type Match } from './plan';
/** Its configuration section: what the configuration reference and the deploy checks read. */
export { txMatcherConfig } from './config';
