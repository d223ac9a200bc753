import { bool, int, secret, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const txGatewayConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  HOST: str({ default: '127.0.0.1', doc: 'interface of the public port' }),
  PORT: int({ default: 8081, min: 0, max: 65535 }),
  OPS_PORT: int({ default: 9101, min: 0, max: 65535, doc: 'port of /metrics, /healthz, /readyz' }),
  REQUEST_TIMEOUT_MS: int({ default: 15_000, min: 100 }),
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024 }),
  CHAIN_RPC_URLS: str({
    default: '',
    doc: 'chain origins, comma-separated network=url pairs (ethereum-mainnet=https://…); networks not listed use CHAIN_RPC_DEFAULT_BASE/<network>',
  }),
  CHAIN_RPC_DEFAULT_BASE: str({ default: 'http://127.0.0.1:8090/rpc', doc: 'base URL of origins not listed in CHAIN_RPC_URLS (the upstream simulator in development)' }),
  CHAIN_RPC_TIMEOUT_MS: int({ default: 10_000, min: 100 }),
  ALLOW_PRIVATE_WEBHOOK_TARGETS: bool({ default: false, doc: 'development and tests only: accept http and loopback/private webhook targets' }),
  WEBHOOK_SECRET_KEY: secret({ doc: '32-byte key (64 hex chars) that encrypts stored webhook secrets' }),
};
