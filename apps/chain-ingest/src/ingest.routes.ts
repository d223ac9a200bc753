import express, { type RequestHandler } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { TOPICS, type Contracts } from '@chainpipe/contracts';
import { ApiRoutes, safeEqual, sendError, sendOk, type RouteRateLimit, type RouteSpec } from '@chainpipe/http';
import type { TopicProducer } from '@chainpipe/kafka';
import { errorMessage, systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import { rawRecordHeaders, resolveNetwork, type IngestRoute } from './raw-record';
import { verifyQuickNodeDelivery, type QuickNodeVerifier } from './webhook-signature';

export interface IngestDeps {
  contracts: Contracts;
  /** `reachable` false means the broker is known to be down: requests are refused at once. */
  producer: Pick<TopicProducer, 'publish' | 'reachable'>;
  logger: Logger;
  registry: Registry;
  streamSecret: string;
  bodyLimitBytes: number;
  clock?: Pick<Clock, 'now'>;
  /** `POST /webhook`'s check of the streaming provider's signature (D173); absent: none (the spec's behaviour). */
  webhookVerifier?: QuickNodeVerifier;
  /** Limits of each route, per client address (`RateLimits.limit`); unlimited without. */
  rateLimits?: { readonly [R in IngestRoute]?: RouteRateLimit };
}

function ingestMetrics(registry: Registry) {
  return {
    requests: new Counter({ name: 'chainpipe_ingest_requests_total', help: 'Ingest requests by route, network and status', labelNames: ['route', 'network', 'status'], registers: [registry] }),
    unverified: new Counter({ name: 'chainpipe_ingest_webhook_refused_total', help: '`POST /webhook` deliveries refused by the signature check, by reason (unsigned, stale, invalid)', labelNames: ['reason'], registers: [registry] }),
    bytes: new Counter({ name: 'chainpipe_ingest_bytes_total', help: 'Body bytes accepted (after decompression)', labelNames: ['route', 'network'], registers: [registry] }),
    publish: new Histogram({
      name: 'chainpipe_ingest_publish_duration_seconds',
      help: 'Time from body received to broker acknowledgement',
      labelNames: ['network'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

/** Seconds a streamer should wait: the broker is known down (recovery is noticed within 0.5 s). */
const RETRY_AFTER_BROKER_DOWN = '2';
/** Seconds a streamer should wait after a publish failed or timed out. */
const RETRY_AFTER_PUBLISH_FAILED = '5';

/**
 * `POST /stream` and `POST /webhook` (also under `/tx/api/v1/`): the body, whatever it is, is
 * published to chain.raw.v1 keyed by network and answered only after the broker acknowledged
 * it, so a 200 means "durable" and anything else means "send it again". While the broker is
 * known to be down, requests get 503 at once instead of each waiting for the publish timeout.
 */
export function ingestRoutes(deps: IngestDeps): ApiRoutes {
  const metrics = ingestMetrics(deps.registry);
  const clock = deps.clock ?? systemClock;
  const log = deps.logger.child({ component: 'ingest' });
  // Any content type: streamers send octet-stream, JSON or nothing at all. gzip/deflate are
  // undone here (the limit applies to the inflated size, which also stops gzip bombs).
  const rawBody = express.raw({ type: () => true, limit: deps.bodyLimitBytes, inflate: true });

  const checkSecret: RequestHandler = (req, res, next) => {
    const presented = req.header('content-secret-x');
    if (!presented || !safeEqual(presented, deps.streamSecret)) {
      metrics.requests.inc({ route: 'stream', network: 'unknown', status: '401' });
      return sendError(res, 401, 'invalid stream secret');
    }
    next();
  };

  const api = new ApiRoutes({
    contracts: deps.contracts,
    auth: {
      streamSecret: {
        handler: checkSecret,
        scheme: { type: 'apiKey', in: 'header', name: 'Content-Secret-X', description: 'the stream secret configured by the operator (STREAM_SECRET); not for ordinary callers' },
        errors: { 401: 'wrong or missing stream secret' },
      },
    },
    rateLimits: deps.rateLimits,
  });

  const handle = (route: IngestRoute): RequestHandler[] => [
    (req, res, next) => {
      // Decided before reading the body: a bad request costs us no upload.
      const resolved = resolveNetwork(req.headers);
      if ('error' in resolved) {
        metrics.requests.inc({ route, network: 'unknown', status: '400' });
        return sendError(res, 400, resolved.error);
      }
      res.locals.network = resolved.network;
      if (!deps.producer.reachable) {
        // Fail fast, before the upload: holding the request would only stall the streamer.
        metrics.requests.inc({ route, network: resolved.network.network, status: '503' });
        res.setHeader('retry-after', RETRY_AFTER_BROKER_DOWN);
        return sendError(res, 503, 'event bus unavailable, retry later');
      }
      next();
    },
    rawBody,
    async (req, res) => {
      const network = res.locals.network;
      const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (body.length === 0) {
        metrics.requests.inc({ route, network: network.network, status: '400' });
        return sendError(res, 400, 'empty body');
      }
      if (route === 'webhook' && deps.webhookVerifier) {
        // Over the inflated body, as the provider signs it (express.raw undid the compression).
        const check = verifyQuickNodeDelivery(deps.webhookVerifier, req.headers, body, clock.now());
        if (!check.ok) {
          metrics.requests.inc({ route, network: network.network, status: '401' });
          metrics.unverified.inc({ reason: check.reason });
          log.warn({ msg: 'webhook_signature_refused', network: network.network, reason: check.reason, bytes: body.length });
          return sendError(res, 401, check.reason === 'unsigned' ? 'missing webhook signature' : check.reason === 'stale' ? 'webhook signature expired' : 'invalid webhook signature');
        }
      }
      const headers = rawRecordHeaders({
        network,
        receivedAtMs: clock.now(),
        contentEncoding: req.header('content-encoding'),
        contentType: req.header('content-type'),
        route,
        requestId: String(res.locals.requestId),
        headers: req.headers,
      });
      const end = metrics.publish.startTimer({ network: network.network });
      try {
        await deps.producer.publish(TOPICS.chainRaw, [{ value: body, headers }]);
      } catch (err) {
        metrics.requests.inc({ route, network: network.network, status: '503' });
        log.warn({ msg: 'ingest_publish_failed', network: network.network, bytes: body.length, err: errorMessage(err) });
        res.setHeader('retry-after', RETRY_AFTER_PUBLISH_FAILED);
        return sendError(res, 503, 'event bus unavailable, retry later');
      }
      end();
      metrics.requests.inc({ route, network: network.network, status: '200' });
      metrics.bytes.inc({ route, network: network.network }, body.length);
      sendOk(res, null, { code: 0, message: 'ok' });
    },
  ];

  const webhookSigned = deps.webhookVerifier !== undefined;
  const signatureErrors = (signed: boolean): Record<number, string> => (signed ? { 401: 'missing, expired or invalid X-QN-Signature (the stream\'s security token is configured)' } : {});
  const ingestion = (path: string, auth: string, summary: string, rateLimit: IngestRoute): RouteSpec => ({
    method: 'post',
    path,
    summary,
    rateLimit,
    description:
      'The body, whatever it is, is published to chain.raw.v1 keyed by network and answered only after the broker acknowledged it: 200 means durable, anything else means send it again.',
    tags: ['ingestion'],
    auth,
    request: {
      headers: 'http/ingest/stream-headers',
      rawBody: { mediaType: 'application/octet-stream', description: 'raw chain data as the streamer sends it (JSON or not, optionally gzip or deflate)' },
    },
    ok: { code: 0, message: 'ok', data: { type: 'null' }, description: 'published durably', example: null },
    errors: {
      400: 'missing or unknown network header, or an empty body',
      413: 'body larger than the limit (after decompression)',
      415: 'unsupported content encoding',
      503: 'the event bus did not acknowledge in time; retry after the Retry-After seconds',
      ...signatureErrors(rateLimit === 'webhook' && webhookSigned),
    },
  });
  for (const prefix of ['', '/tx/api/v1']) {
    api.route(ingestion(`${prefix}/stream`, 'streamSecret', 'Ingest raw chain data from a streamer', 'stream'), ...handle('stream'));
    api.route(
      ingestion(`${prefix}/webhook`, 'none', webhookSigned ? 'Ingest raw chain data signed by the streaming provider (X-QN-Signature; no stream secret)' : 'Ingest raw chain data (no stream secret)', 'webhook'),
      ...handle('webhook'),
    );
  }
  return api;
}
