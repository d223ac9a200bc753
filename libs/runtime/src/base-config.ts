import { bool, int, oneOf, str, type ConfigOf } from './config';

/** What every app has: its name in logs, log level and format, the ops port and the shutdown deadline. */
export const baseConfig = {
  LOG_LEVEL: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, { default: 'info', doc: 'pino level' }),
  LOG_PRETTY: bool({ default: false, doc: 'human-readable log lines instead of JSON' }),
  OPS_HOST: str({ default: '127.0.0.1', doc: 'interface of /metrics, /healthz, /readyz' }),
  OPS_PORT: int({ min: 0, max: 65535, doc: 'port of /metrics, /healthz, /readyz' }),
  SHUTDOWN_TIMEOUT_MS: int({ default: 25_000, min: 1_000, doc: 'hard deadline of a graceful shutdown' }),
};
export type BaseConfig = ConfigOf<typeof baseConfig>;
