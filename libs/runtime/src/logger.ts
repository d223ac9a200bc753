import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** The app or component name, on every line as `app`. */
  name: string;
  level?: string;
  /** Human-readable lines for a terminal; JSON otherwise. */
  pretty?: boolean;
  /** Where lines go; stdout by default (tests pass a sink). */
  destination?: pino.DestinationStream;
}

/**
 * Paths never printed. Secrets travel in headers and config; request logging only ever logs
 * selected fields, and this is the net under that rule.
 */
const REDACT = [
  'config.STREAM_SECRET',
  'config.DATABASE_URL',
  'headers["x-api-key"]',
  'headers["content-secret-x"]',
  'headers.authorization',
  'headers["x-integrator-api-key"]',
  '*.apiKey',
  '*.secret',
  '*.webhook_secret',
];

export function createLogger(opts: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level: opts.level ?? 'info',
    base: { app: opts.name },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (opts.destination) return pino(options, opts.destination);
  if (opts.pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, singleLine: true } } });
  }
  return pino(options);
}
