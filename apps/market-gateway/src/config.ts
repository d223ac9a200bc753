import { int, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { redisConfig } from '@chainpipe/redis';

export const marketGatewayConfig = {
  ...dbConfig,
  ...redisConfig,
  HOST: str({ default: '127.0.0.1', doc: 'interface of the public port' }),
  PORT: int({ default: 8080, min: 0, max: 65535 }),
  OPS_PORT: int({ default: 9100, min: 0, max: 65535, doc: 'port of /metrics, /healthz, /readyz' }),
  REQUEST_TIMEOUT_MS: int({ default: 15_000, min: 100, doc: 'deadline of a request (504 past it); also the Postgres statement_timeout' }),
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024 }),
};
