import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { isDependencyUnavailable, systemClock, type Clock, type Logger, type Timer } from '@chainpipe/runtime';
import { ENVELOPE_CHOICE, apiDocumentOf, assertRoutesDocumented } from './api-docs';
import { exactRouteDispatcher, runExactRoute, type ApiRoutes, type ExactRouteTable } from './api-routes';
import { envelopeOf, sendError, setEnvelope, type EnvelopeStyle } from './envelope';
import { HttpError } from './errors';

export interface HttpAppOptions {
  logger: Logger;
  registry: Registry;
  /** Style of responses whose path `envelopeFor` does not claim. */
  defaultEnvelope: EnvelopeStyle;
  /**
   * The envelope of a path, decided before anything runs: body-parser errors, auth failures and
   * timeouts of a route then answer in that route's style too.
   */
  envelopeFor?: (path: string) => EnvelopeStyle | undefined;
  /** A request running longer than this gets 504 (the spec's 15 s). */
  timeoutMs?: number;
  /** Time of the request deadline. */
  clock?: Pick<Clock, 'setTimeout'>;
}

const DEADLINE = 'requestDeadline';
/** What every request gets first (request id, envelope, deadline, metrics): `createHttpApp`'s first middleware. */
type RequestBegin = (req: Request, res: Response) => void;
const BEGIN = 'requestBegin';
/** `serveExactRoutes`' table, which `finishHttpApp` serves in front of express. */
const EXACT_ROUTES = 'exactRoutes';
const REQUEST_ID = /^[\w.-]{1,100}$/;

/**
 * Takes a response out of the request deadline: a stream whose own timing the spec gives (the
 * quote stream's per-channel timeout, its heartbeats) must not be cut by the 504 of ordinary
 * requests. Call it once the request is checked and the long-lived part begins.
 */
export function leaveRequestDeadline(res: Response): void {
  (res.locals[DEADLINE] as Timer | undefined)?.cancel();
}

function httpMetrics(registry: Registry) {
  return {
    duration: new Histogram({
      name: 'chainpipe_http_request_duration_seconds',
      help: 'HTTP request duration by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
      registers: [registry],
    }),
    requests: new Counter({
      name: 'chainpipe_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
  };
}

/**
 * An express app with what every public API here needs: request ids, per-route metrics, a
 * request deadline answered with 504, and (via `finishHttpApp`) JSON errors in the router's
 * envelope for everything, including malformed and oversized bodies. No error reaches a client
 * as an HTML page or an unhandled 500.
 */
export function createHttpApp(opts: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const metrics = httpMetrics(opts.registry);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const clock = opts.clock ?? systemClock;
  const log = opts.logger.child({ component: 'http' });
  const envelopeFor = (path: string) => opts.envelopeFor?.(path) ?? opts.defaultEnvelope;
  // The API document describes each route in the envelope this chooses (serveApiDocs).
  app.locals[ENVELOPE_CHOICE] = envelopeFor;

  // Paths are few (the routes') next to requests: each path's envelope is decided once. Long
  // paths (any a client makes up) are not kept, so the map stays small whatever arrives.
  const envelopes = new Map<string, EnvelopeStyle>();
  const envelopeOfPath = (path: string): EnvelopeStyle => {
    if (path.length > 200) return envelopeFor(path);
    let style = envelopes.get(path);
    if (!style) {
      style = envelopeFor(path);
      if (envelopes.size >= 1_000) envelopes.clear();
      envelopes.set(path, style);
    }
    return style;
  };

  const begin: RequestBegin = (req, res) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader('x-request-id', id);
    setEnvelope(res, envelopeOfPath(req.path));
    const start = performance.now();
    const timer = clock.setTimeout(() => {
      if (!res.headersSent) {
        log.warn({ msg: 'request_timeout', method: req.method, path: req.path, requestId: id, timeoutMs });
        sendError(res, 504, `request timed out after ${Math.round(timeoutMs / 1000)} seconds`);
      }
    }, timeoutMs);
    res.locals[DEADLINE] = timer;
    res.on('close', () => {
      timer.cancel();
      // Route templates, not raw paths: a label per tx hash would explode the series count.
      const route = req.route?.path ? String(req.baseUrl ?? '') + String(req.route.path) : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      metrics.duration.observe(labels, (performance.now() - start) / 1e3);
      metrics.requests.inc(labels);
    });
  };
  app.locals[BEGIN] = begin;
  useMessageClasses(app);
  parseQueryOnce(app);
  app.use((req, res, next) => {
    begin(req, res);
    next();
  });
  return app;
}

/** Where `parseQueryOnce` keeps a request's parsed query string, and the URL it was parsed from. */
const QUERY = Symbol('query');
const QUERY_URL = Symbol('queryUrl');
type QueryHolder = { url: string; app: Express; [QUERY]?: unknown; [QUERY_URL]?: string };

/**
 * `req.query` of the app's requests parsed once per request and URL: Express 5 parses the query
 * string again (and looks its parser setting up) on every read, and the check of a route's
 * parameters and its handler each read it. The same object is returned while `req.url` is the
 * same (a router trimming a mount prefix keeps the query string, and a new URL is parsed anew).
 */
function parseQueryOnce(app: Express): void {
  Object.defineProperty(app.request, 'query', {
    configurable: true,
    enumerable: true,
    get(this: QueryHolder): unknown {
      if (this[QUERY_URL] === this.url) return this[QUERY];
      const parse = this.app.get('query parser fn') as ((text: string) => unknown) | undefined;
      const search = this.url.indexOf('?');
      const query = parse ? parse(search < 0 ? '' : this.url.slice(search + 1)) : {};
      this[QUERY] = query;
      this[QUERY_URL] = this.url;
      return query;
    },
  });
}

/** Seconds a client should wait before retrying while a dependency is unreachable. */
const RETRY_AFTER_UNAVAILABLE = '2';

/** Body-parser and express errors carry `type`/`status`; map them to the spec's codes. */
function classify(err: unknown): { status: number; message: string; code?: number; details?: unknown; expected: boolean; unavailable?: boolean } {
  if (err instanceof HttpError) return { status: err.status, message: err.message, code: err.code, details: err.details, expected: true };
  if (isDependencyUnavailable(err)) return { status: 503, message: 'service unavailable, retry later', expected: true, unavailable: true };
  const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
  switch (e?.type) {
    case 'entity.too.large':
      return { status: 413, message: 'request body too large', expected: true };
    case 'entity.parse.failed':
      return { status: 400, message: 'invalid JSON', expected: true };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, message: e.message ?? 'unsupported encoding', expected: true };
    case 'request.aborted':
      return { status: 400, message: 'request aborted', expected: true };
    case 'request.size.invalid':
      return { status: 400, message: 'request size did not match content length', expected: true };
    default:
      break;
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, message: e.message ?? 'bad request', expected: true };
  return { status: 500, message: 'internal error', expected: false };
}

/**
 * Adds the 404 and error handlers; call after every route is mounted. An app that serves an API
 * document (`serveApiDocs`) must serve exactly the documented routes, or this throws at boot.
 */
export function finishHttpApp(app: Express, logger: Logger): void {
  const document = apiDocumentOf(app);
  if (document) assertRoutesDocumented(app, document);
  app.use((req, res) => sendError(res, 404, `no route for ${req.method} ${req.path}`));
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const c = classify(err);
    if (!c.expected) logger.error({ msg: 'request_failed', method: req.method, path: req.path, requestId: res.locals.requestId, err });
    if (c.unavailable) logger.warn({ msg: 'dependency_unavailable', method: req.method, path: req.path, requestId: res.locals.requestId, err: (err as Error)?.message });
    if (res.headersSent) return;
    if (c.unavailable) res.setHeader('retry-after', RETRY_AFTER_UNAVAILABLE);
    res.status(c.status).json(envelopeOf(res).error(c.status, c.code ?? c.status, c.message, c.details));
  };
  app.use(onError);
  const exact = app.locals[EXACT_ROUTES] as ExactRouteTable | undefined;
  if (exact) serveInFront(app, exact, onError, logger);
}

/**
 * Serves the app's exact routes (`serveExactRoutes`) before express's router: what express does
 * for a request (circular references, its request and response prototypes, `res.locals`,
 * `baseUrl`, `originalUrl`), then what every request gets (`createHttpApp`'s first middleware:
 * request id, envelope, deadline, metrics), then the route's handlers, errors to the app's error
 * handler. The router would do the same for these paths, after walking its layers and building
 * its closures for each request. Any other request, and every request of an app mounted inside
 * another (express hands those on with a callback), goes through express.
 */
function serveInFront(app: Express, find: ExactRouteTable, onError: ErrorRequestHandler, logger: Logger): void {
  const begin = app.locals[BEGIN] as RequestBegin;
  type Handle = (req: Request, res: Response, callback?: NextFunction) => void;
  const target = app as unknown as { handle: Handle };
  const expressHandle = target.handle;
  // The error handler's own failure: what express's final handler would do, in the envelope.
  const lastResort = (err: unknown, req: Request, res: Response) => {
    logger.error({ msg: 'request_failed', method: req.method, path: req.path, requestId: res.locals.requestId, err });
    if (res.headersSent) req.socket.destroy();
    else sendError(res, 500, 'internal error');
  };
  target.handle = function handle(this: unknown, req, res, callback) {
    if (callback !== undefined) return expressHandle.call(this, req, res, callback);
    req.res = res;
    res.req = req;
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    if (!res.locals) res.locals = Object.create(null) as Response['locals'];
    const entry = find(req.method, req.path);
    if (!entry) return expressHandle.call(this, req, res, callback);
    req.baseUrl = '';
    req.originalUrl = req.originalUrl || req.url;
    begin(req, res);
    runExactRoute(entry, req, res, (err) => {
      try {
        onError(err, req, res, (e?: unknown) => lastResort(e ?? err, req, res));
      } catch (e) {
        lastResort(e, req, res);
      }
    });
  };
}

/**
 * Serves the routes of `apis` without path parameters from a table (`exactRouteDispatcher`), in
 * front of express once the app is finished (`finishHttpApp`). Call right after `createHttpApp`,
 * before the routers of `apis` and before any other middleware: served in front, these routes
 * cross no middleware but the app's first.
 */
export function serveExactRoutes(app: Express, apis: readonly ApiRoutes[]): void {
  if (!app.locals[BEGIN]) throw new Error('serveExactRoutes: the app must come from createHttpApp');
  if ((app as unknown as { router: { stack: unknown[] } }).router.stack.length !== 1) throw new Error('serveExactRoutes: call it right after createHttpApp (middleware mounted before it would be skipped)');
  if (app.locals[EXACT_ROUTES]) throw new Error('serveExactRoutes: called twice');
  const dispatcher = exactRouteDispatcher(apis);
  app.use(dispatcher);
  app.locals[EXACT_ROUTES] = dispatcher.find;
}

export interface StartedServer {
  server: http.Server;
  address: AddressInfo;
  /** Stops accepting connections, lets in-flight requests finish, then closes idle sockets. */
  close(): Promise<void>;
}

const MESSAGE_CLASSES = 'messageClasses';

/**
 * The server's request and response classes for `app`, made once by `createHttpApp`: the app's
 * request and response prototypes become theirs, so every request and response is born with the
 * prototype express (and the exact-route front) gives it, whose `setPrototypeOf` then changes
 * nothing. Changing the prototype of two fresh objects on every request costs V8 a map transition
 * each and leaves node's http code that touches them on slow paths. Subclasses of node's own, so
 * V8 lays their instances out as node's (a constructor function of our own would size them by its
 * own few fields and put node's in a second store).
 */
function useMessageClasses(app: Express): void {
  class AppRequest extends http.IncomingMessage {
    [QUERY]: unknown = undefined;
    [QUERY_URL]: string | undefined = undefined;
  }
  class AppResponse extends http.ServerResponse {}
  // In express's place: the app's prototype (its own `app`) over express's request or response,
  // so that mounting the app in another re-parents it as express does.
  for (const [ours, apps] of [
    [AppRequest.prototype, app.request],
    [AppResponse.prototype, app.response],
  ] as const) {
    Object.defineProperties(ours, Object.getOwnPropertyDescriptors(apps));
    Object.setPrototypeOf(ours, Object.getPrototypeOf(apps));
  }
  app.request = AppRequest.prototype as unknown as typeof app.request;
  app.response = AppResponse.prototype as unknown as typeof app.response;
  app.locals[MESSAGE_CLASSES] = { IncomingMessage: AppRequest, ServerResponse: AppResponse };
}

export async function listen(app: Express, port: number, host: string): Promise<StartedServer> {
  const classes = app.locals[MESSAGE_CLASSES] as Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> | undefined;
  const server = classes ? http.createServer(classes, app) : http.createServer(app);
  // Connections held open by clients must not hold a shutdown hostage.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
