/** What tools use of the app (the configuration reference, the deploy checks): its configuration section. */
export { ingestConfig } from './config';
