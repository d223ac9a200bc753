import { bool, int, secret, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { httpServerConfig } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const txGatewayConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  ...httpServerConfig('tx-gateway'),
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
