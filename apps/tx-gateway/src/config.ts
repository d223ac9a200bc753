import { chainOriginConfig } from '@chainpipe/chains';
import { bool, int, secret, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { httpServerConfig, rateLimitField, trustedProxiesField } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';
import { webhookTrustConfig } from '@chainpipe/webhooks';

export const txGatewayConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  ...httpServerConfig('tx-gateway'),
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024, doc: 'largest accepted request body (413 above it)' }),
  ...chainOriginConfig,
  RPC_PROXY_URLS: str({
    default: '',
    doc: 'nodes of the RPC proxy (POST /api/v1/rpcproxy), comma-separated network=url pairs; networks not listed use the read nodes (CHAIN_RPC_URLS / CHAIN_RPC_DEFAULT_BASE). Never the nodes order-executor broadcasts through',
  }),
  RATE_LIMIT_TRUSTED_PROXIES: trustedProxiesField(),
  RATE_LIMIT_RPC_PROXY_PER_KEY: rateLimitField({ default: '1200/1m', doc: 'RPC proxy calls of one API key, every copy counted together (Redis)' }),
  RATE_LIMIT_RPC_PROXY_PER_CLIENT: rateLimitField({ default: '2400/1m', doc: 'RPC proxy calls of a client address (keyed, with a wrong key or none), checked before the key, every copy counted together' }),
  RPC_PROXY_MAX_ANSWER_BYTES: int({ default: 8 * 1024 * 1024, min: 1024, max: 128 * 1024 * 1024, doc: 'largest node answer the RPC proxy passes on; a larger one is a 502 and is not read further' }),
  ALLOW_PRIVATE_WEBHOOK_TARGETS: bool({ default: false, doc: 'development and tests only: accept http and loopback/private webhook targets' }),
  ...webhookTrustConfig,
  WS_PUSH_ENABLED: bool({ default: true, doc: 'false serves the REST API only: no WebSocket endpoint and no tx.push.v1 consumer' }),
  TX_GATEWAY_PUSH_GROUP: str({
    default: 'tx-gateway-push',
    doc: 'consumer group of tx.push.v1, shared by every copy: its committed offsets carry the pushes matched while no copy ran into the resend store',
  }),
  TX_GATEWAY_SESSION_TIMEOUT_MS: int({ default: 30_000, min: 6_000, max: 300_000, doc: 'Kafka session timeout of the push consumer' }),
  WS_MAX_CONNECTIONS_PER_KEY: int({ default: 50, min: 1, doc: 'open WebSocket connections per API key, counted across every copy (Redis); more are refused with 429' }),
  WS_CONNECTION_LEASE_MS: int({ default: 30_000, min: 300, doc: 'how long a connection holds its slot of the per-key cap unless its copy renews it (every third of this): the slots of a copy that died come back within it' }),
  WS_MAX_BUFFERED_BYTES: int({ default: 4 * 1024 * 1024, min: 1024, doc: 'unsent bytes a WebSocket client may fall behind before it is disconnected' }),
  WS_PING_INTERVAL_MS: int({ default: 30_000, min: 100, doc: 'keep-alive ping period; a connection that missed one pong is closed' }),
  WS_RESEND_DEFAULT_SECONDS: int({ default: 180, min: 0, doc: 'resend window when the client sends no X-ResendDuration' }),
  WS_RESEND_RETENTION_SECONDS: int({ default: 3600, min: 1, doc: 'how long unacknowledged pushes are kept in Redis (the largest X-ResendDuration honoured)' }),
  WS_RESEND_SCAN_MS: int({ default: 1_000, min: 50, doc: 'how often connections are checked for unacknowledged pushes due again (ws_ack_resend_interval_seconds)' }),
  WS_RESEND_CONFIG_CACHE_MS: int({ default: 10_000, min: 0, max: 600_000, doc: 'how long an application\'s ws_ack_resend_interval_seconds is kept before it is read again (a change takes effect within it)' }),
  WS_FANOUT_MAX_ENTRIES: int({
    default: 10_000,
    min: 10,
    doc: 'entries kept (about) in the fan-out stream every copy reads: a copy that falls further behind sends its connections what they missed from the resend store, or closes them with 1013',
  }),
  WS_MAX_MESSAGE_BYTES: int({ default: 64 * 1024, min: 1024, doc: 'largest client message' }),
  WEBHOOK_SECRET_KEY: secret({ doc: '32-byte key (64 hex chars) that encrypts stored webhook secrets' }),
};
