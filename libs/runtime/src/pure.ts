/**
 * `@chainpipe/runtime/pure`: the parts of the runtime that do no I/O and load no logger, metrics
 * or HTTP server (no node:http, pino or prom-client): config declarations and their checks, the
 * clock, errors and their codes, bounded concurrency, the port table and each app's node options.
 * The pure domain libs (eslint's layering rule) import these from here, never the package's
 * index, which also brings the service kit.
 */
export * from './config';
export * from './errors';
export * from './clock';
export * from './error-codes';
export * from './bounded';
export * from './ports';
export * from './node-options';
