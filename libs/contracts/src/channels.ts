import type { AsyncApiInfo, AsyncChannel } from './asyncapi';

/**
 * The client-facing asynchronous channels (WebSockets, the SSE quote stream, the webhook callback), declared once: the
 * gateways serve them in their `/asyncapi.json`, `npm run gen` writes them with the Kafka topics
 * to `docs/asyncapi.json`, and the contract tests check that every WebSocket address is a route
 * of the gateway's OpenAPI document. A new channel is one entry here and its schemas.
 */
export const TX_PUSH_WS_PATH = '/tx/api/v1/transaction/ws';
export const KLINE_WS_PATH = '/kline/api/v1/kline/ws';
export const KLINE_TOPIC_WS_PATH = '/kline/api/v1/ws/{topic}';

export const TX_GATEWAY_CHANNELS: readonly AsyncChannel[] = [
  {
    key: 'transactionWs',
    address: TX_PUSH_WS_PATH,
    description:
      'WebSocket push of matched transactions (also at /transaction/transaction/ws). Handshake: `X-API-Key`, optional `X-ResendDuration` (seconds, default 180). The server sends `connected` at once, then a `transaction` per matched transaction, re-sent until the client answers `transactionACK` or the resend window ends. A connection follows every address of its application; `subscribe` narrows it to the subscribed addresses, `unsubscribe` stops an address (on one chain, or every chain without `chain_type`) until it is subscribed again, and removing the last subscription never widens the connection back to every address.',
    action: 'send',
    messages: [
      { name: 'transaction', summary: 'a transaction of a monitored address (the V2 record with listenAddress)', payload: 'ws/tx/transaction-push' },
      { name: 'tx-server-reply', summary: 'connected, pong, and the replies to subscribe, unsubscribe and getTxHash', payload: 'ws/tx/server-reply' },
      { name: 'tx-client-command', summary: 'ping, subscribe, unsubscribe, getTxHash, transactionACK', payload: 'ws/tx/client-command', action: 'receive' },
    ],
  },
  {
    key: 'webhookCallback',
    address: '{webhook_url}',
    description:
      "The application's webhook: one POST per batch of up to 100 transactions, signed with the application's secret (`Sign` header and the Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature`). A 2xx answer acknowledges; anything else is retried with backoff for up to 36 hours.",
    action: 'send',
    messages: [{ name: 'transaction-batch', summary: 'TransactionResult records (camelCase)', payload: 'webhook/tx/transaction-batch' }],
  },
];

export const MARKET_GATEWAY_CHANNELS: readonly AsyncChannel[] = [
  {
    key: 'klineWs',
    address: KLINE_WS_PATH,
    description:
      'Live candles. Handshake: `X-API-Key` (a browser, which cannot send headers, offers the key as the subprotocol `x-api-key.<key>` beside `kline.v1`; the server selects `kline.v1`). After `subscribe` the server answers `subscribed`, then a `snapshot` candle when it holds one, then live `ohlcv` pushes of the subscribed intervals. Clients upsert by (pool, interval, open_time), re-subscribe after a reconnect and fill gaps from GET /kline/api/v1/kline/ohlcv.',
    action: 'send',
    messages: [
      { name: 'kline-server-message', summary: 'pong, subscribed, unsubscribed, ohlcv, error', payload: 'ws/kline/server-message' },
      { name: 'kline-ohlcv', summary: 'data of an ohlcv push', payload: 'ws/kline/ohlcv-push' },
      { name: 'kline-client-command', summary: 'ping, subscribe, unsubscribe', payload: 'ws/kline/client-command', action: 'receive' },
    ],
  },
  {
    key: 'klineTopicWs',
    address: KLINE_TOPIC_WS_PATH,
    description: 'Generic socket named by its topic: application `ping` answered with `pong`; a binary frame gets an `error` with code 4001.',
    action: 'send',
    messages: [
      { name: 'topic-pong', summary: 'pong (data {}) or error', payload: 'ws/kline/server-message' },
      { name: 'topic-ping', summary: 'ping', payload: { type: 'object', required: ['id', 'type'], properties: { id: { type: 'string' }, type: { const: 'ping' } } }, action: 'receive' },
    ],
  },
];

export const QUOTE_STREAM_PATH = '/api/v2/quote/stream';

export const AGGREGATOR_GATEWAY_CHANNELS: readonly AsyncChannel[] = [
  {
    key: 'quoteStream',
    address: QUOTE_STREAM_PATH,
    description:
      'Server-sent events (`text/event-stream`) after a GET or POST of the quote request: one `channel` event per channel as soon as it answers, an `error` event per channel that failed or timed out, then `done`. Comment lines (`:`) keep long streams alive. Closing the connection cancels every quote still running.',
    action: 'send',
    messages: [
      { name: 'channel', summary: 'a channel quote', payload: 'http/agg/channel-quote', contentType: 'text/event-stream' },
      { name: 'quote-error', summary: 'event `error`: one channel failed', payload: 'sse/agg/quote-error', contentType: 'text/event-stream' },
      { name: 'quote-done', summary: 'event `done`: the stream ends', payload: 'sse/agg/quote-done', contentType: 'text/event-stream' },
    ],
  },
];

export const AGGREGATOR_GATEWAY_ASYNC_INFO: AsyncApiInfo = {
  title: 'chainpipe aggregator quote stream',
  version: '1.0.0',
  description: 'Quotes of every channel streamed as server-sent events.',
};

export const TX_GATEWAY_ASYNC_INFO: AsyncApiInfo = {
  title: 'chainpipe address monitoring push channels',
  version: '1.0.0',
  description: 'What the address monitoring service pushes: the transaction WebSocket and the webhook callback.',
};

export const MARKET_GATEWAY_ASYNC_INFO: AsyncApiInfo = {
  title: 'chainpipe candlestick WebSockets',
  version: '1.0.0',
  description: 'Live candles of registered pools over WebSocket.',
};
