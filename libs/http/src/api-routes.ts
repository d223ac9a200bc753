import type { ErrorObject, ValidateFunction } from 'ajv';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { formatErrors, type Contracts, type JsonSchema, type SchemaId, type SchemaTypes } from '@chainpipe/contracts';
import { holdsNul, nulErrors, onlyUnmatchableLookups, type LookupParams } from './boundary';
import { sendError } from './envelope';
import { rateCheckHandler, type RouteRateLimit } from './rate-limit';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A schema of `schemas/` by id, or a small inline one for trivial values (`{ const: 'success' }`). */
export type SchemaRef = string | JsonSchema;

/**
 * How a route is authenticated: the middleware that checks it, how the API documents describe
 * it (an OpenAPI security scheme) and the error statuses it answers.
 */
export interface ApiAuth {
  handler: RequestHandler;
  scheme: { type: 'apiKey'; in: 'header' | 'query'; name: string; description?: string };
  errors: Readonly<Record<number, string>>;
  /** The key a request authenticated with (its id), for per-key rate limits; undefined when it came without one. */
  keyOf?: (res: Response) => string | undefined;
}

export interface RouteSuccess {
  /** HTTP status; 200 unless given. */
  status?: number;
  /** Business `code` and message of the envelope (what the handler passes to `sendOk`). */
  code?: number;
  message?: string;
  /** Schema of `data` inside the envelope (of the whole body when `bare`). */
  data: SchemaRef;
  description: string;
  /** Example of `data`; the documents wrap it in the route's envelope. Checked against `data` by the contract tests. */
  example?: unknown;
  /** The body is `data` itself, without an envelope. */
  bare?: boolean;
  /**
   * The success status also carries the service's error envelope, and when (the price
   * service's 20002 `chain not found` is HTTP 200): documented as one of the two.
   */
  businessErrors?: string;
  /** Media type of a bare body; `application/json` unless given. */
  mediaType?: string;
}

/**
 * An error answer of a route: its description (the body is the route's error envelope), or a
 * body of another media type (a plain-text 426 of a WebSocket path).
 */
export type RouteError = string | { description: string; mediaType: string; example?: string };

/**
 * One route, declared once: `ApiRoutes.route` registers it on express (auth, body parsing,
 * validation of parameters and body against `schemas/`) and the OpenAPI document is generated
 * from the same declaration, so a route cannot exist undocumented.
 */
/**
 * What a route takes: the schemas of its parameters and body, by id. The type parameters are
 * the ids a declaration names (`ApiRoutes.route` infers them), which type its handlers.
 */
export interface RouteRequest<P extends SchemaId = SchemaId, Pa extends SchemaId = SchemaId, Q extends SchemaId = SchemaId, B extends SchemaId = SchemaId, C extends boolean = boolean> {
  /**
   * Schema of the path and query parameters merged into one object (strings, as they arrive;
   * path parameters win). A property named in the path template is a path parameter, the
   * others are query parameters, so one schema serves two layouts that carry a value in the
   * path or in the query. Validated; the result (defaults applied) is `requestParams(res)`.
   */
  params?: P;
  /** Schema of the path parameters alone (when path and query have schemas of their own). */
  path?: Pa;
  /** Schema of the query parameters alone. */
  query?: Q;
  /** Schema of the JSON body; parsed after authentication, then validated. */
  body?: B;
  /** An example body for the documents; checked against `body` by the contract tests. */
  bodyExample?: unknown;
  /** False when a request may come without a body: it is then validated as `{}`. */
  bodyRequired?: boolean;
  /**
   * A body that is not JSON (its media type and what it is): documented only; the route's own
   * handlers read it (e.g. `express.raw` after checks that must come before the upload).
   */
  rawBody?: { mediaType: string; description: string };
  /**
   * Schema of request headers: documented, not validated here. Handlers check headers
   * themselves because the spec gives header failures their own statuses (401 for a stream
   * secret, 500 for a missing `x-chain-net`).
   */
  headers?: SchemaId;
  /**
   * The parameters and body are documented from their schemas but checked by the route's own
   * handlers, because the spec gives their failures codes and texts of its own that a schema
   * error cannot carry (the token price service's 20001 `ids is required`, 20003 for a body).
   */
  checkedByHandler?: C;
  /**
   * Parameters that only look a stored row up, with the route's "not found" answer: a value of
   * theirs that no row can hold (a NUL, an integer past its column) gets that answer instead
   * of the 400 (see `boundary.ts`).
   */
  lookup?: LookupParams;
}

/** The type of the schema a route names (`unknown` when it names none, or no single one). */
type SchemaTypeOf<Id extends SchemaId> = [Id] extends [never] ? unknown : SchemaId extends Id ? unknown : SchemaTypes[Id];

/** The validated path and query parameters of a route (`requestParams(res)`); none when its handlers check them. */
export type RouteParams<R> =
  R extends RouteRequest<infer P, infer Pa, infer Q, SchemaId, infer C> ? ([C] extends [true] ? undefined : SchemaTypeOf<P> & SchemaTypeOf<Pa> & SchemaTypeOf<Q>) : unknown;

/** The validated JSON body of a route (`req.body`); `unknown` when its handlers check it. */
export type RouteBody<R> = R extends RouteRequest<SchemaId, SchemaId, SchemaId, infer B, infer C> ? ([C] extends [true] ? unknown : SchemaTypeOf<B>) : unknown;

/** Where the validated parameters are kept for the handlers. */
const PARAMS = 'requestParams';

/** `res.locals` of a route's handlers: the validated parameters beside whatever middleware adds. */
export type RouteLocals<P> = Record<string, unknown> & { [PARAMS]: P };

/**
 * A handler of a route: `req.body` and `requestParams(res)` are typed from the schemas the
 * route's declaration names, so a schema change that breaks a handler fails the typecheck.
 */
export type RouteHandler<R extends RouteRequest = RouteRequest> = (
  req: Request<Record<string, string>, unknown, RouteBody<R>>,
  res: Response<unknown, RouteLocals<RouteParams<R>>>,
  next: NextFunction,
) => unknown;

/** The schema ids of a route's parameters and body, for a handler declared apart from its route (`HandlerFor`). */
export interface RequestIds {
  params?: SchemaId;
  path?: SchemaId;
  query?: SchemaId;
  body?: SchemaId;
}

type IdOf<Ids extends RequestIds, K extends keyof RequestIds> = Ids extends { [P in K]: infer Id extends SchemaId } ? Id : never;

/**
 * A handler declared apart from its route, typed by the ids the route names:
 * `HandlerFor<{ params: 'http/agg/integrator-order-params' }>`.
 */
export type HandlerFor<Ids extends RequestIds> = RouteHandler<RouteRequest<IdOf<Ids, 'params'>, IdOf<Ids, 'path'>, IdOf<Ids, 'query'>, IdOf<Ids, 'body'>, false>>;

export interface RouteSpec<R extends RouteRequest = RouteRequest> {
  method: HttpMethod;
  /** Express path (`/tx/api/v1/transactions/:tx_hash`); documented as `{tx_hash}`. */
  path: string;
  summary: string;
  description?: string;
  /** Groups in the rendered docs. */
  tags?: readonly string[];
  /** A key of `ApiRoutesOptions.auth`, or `none` (the spec says which routes need no key). */
  auth: string;
  request?: R;
  /** Checks that must answer before the schema's generic 400 (run after auth and body parsing). */
  preValidation?: readonly RequestHandler[];
  ok: RouteSuccess;
  /**
   * The name of the route's rate limit in `ApiRoutesOptions.rateLimits` (429 with `Retry-After`
   * past it, documented): per client before authentication, per key after it. An API built
   * without that limit (a unit test's) serves the route unlimited.
   */
  rateLimit?: string;
  /** Error statuses this route answers beyond the generated ones (auth, 400, 413, 429, 500, 504). */
  errors?: Readonly<Record<number, RouteError>>;
  /** Stable name of the operation; derived from method and path when not given. */
  operationId?: string;
}

export interface ApiRoutesOptions {
  contracts: Contracts;
  /** Authentication schemes by the name routes use in `auth`. */
  auth?: Readonly<Record<string, ApiAuth>>;
  /** The JSON body parser (with the app's size limit); run after auth, only on routes with a body. */
  jsonBody?: RequestHandler;
  /**
   * How this API answers a request that fails its schema (which part failed, ajv's errors);
   * a 400 in the route's envelope with the errors' text unless given. A service whose spec
   * gives validation failures a shape of their own (the candlestick service's 10001 with
   * `fieldErrors`) says so here, once.
   */
  invalid?: (res: Response, errors: readonly ErrorObject[], part: RequestPart) => void;
  /** Rate limits by the names routes use in `rateLimit` (`RateLimits.limit`, from the app's configuration). */
  rateLimits?: Readonly<Record<string, RouteRateLimit | undefined>>;
}

/** The part of a request a schema checks. */
export type RequestPart = 'params' | 'path' | 'query' | 'body';

type InvalidResponder = NonNullable<ApiRoutesOptions['invalid']>;
const defaultInvalid: InvalidResponder = (res, errors) => sendError(res, 400, formatErrors([...errors]));

/**
 * The validated path and query parameters (`request.params`, or `request.path` and
 * `request.query`), defaults applied; typed by the route the handler serves (`RouteHandler`).
 */
export function requestParams<P>(res: Response<unknown, RouteLocals<P>>): P {
  return res.locals[PARAMS];
}

/** Names of the path parameters of an express path (`:name`). */
export function pathParams(path: string): string[] {
  if (/[*?()[\]{}]/.test(path)) throw new Error(`route path ${path}: only literal segments and :name parameters are supported`);
  return [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
}

type ParamsSource = 'merged' | 'path' | 'query';

/** Schema errors and the boundary's own (NUL characters) of one request part. */
function problemsOf(validate: ValidateFunction | undefined, value: unknown): ErrorObject[] {
  // Validation first: the walk sees the value as ajv left it (coerced, defaults filled in).
  const valid = !validate || validate(value);
  const nul = nulErrors(value);
  return valid ? nul : [...(validate.errors ?? []), ...nul];
}

/** Answers a part with problems (`invalid`, or the lookup's "not found"); true when it did. */
function refused(problems: readonly ErrorObject[], part: RequestPart, lookup: LookupParams | undefined, invalid: InvalidResponder, req: Request, res: Response, next: NextFunction): boolean {
  if (problems.length === 0) return false;
  if (part !== 'body' && onlyUnmatchableLookups(problems, lookup)) void lookup!.notFound(req, res, next);
  else invalid(res, problems, part);
  return true;
}

function paramsOf(req: Request, source: ParamsSource): Record<string, unknown> {
  // Express 5 re-parses req.query on every read: the validated copy is what handlers use.
  const query = { ...(req.query as Record<string, unknown>) };
  return source === 'path' ? { ...req.params } : source === 'query' ? query : { ...query, ...req.params };
}

/** Checks the path and query parameters: against `validate` when given, always against the boundary's rule. */
function validateParams(validate: ValidateFunction | undefined, source: ParamsSource, invalid: InvalidResponder, lookup: LookupParams | undefined): RequestHandler {
  const part = source === 'merged' ? 'params' : source;
  if (!validate) {
    // The boundary's rule only reads: the parameters are walked where they are, and a merged
    // copy is made only to name the problems of a request that has some.
    return (req, res, next) => {
      const clean = (source === 'path' || !holdsNul(req.query)) && (source === 'query' || !holdsNul(req.params));
      if (clean || !refused(nulErrors(paramsOf(req, source)), part, lookup, invalid, req, res, next)) next();
    };
  }
  return (req, res, next) => {
    const params = paramsOf(req, source);
    if (refused(problemsOf(validate, params), part, lookup, invalid, req, res, next)) return;
    res.locals[PARAMS] = { ...(res.locals[PARAMS] as object | undefined), ...params };
    next();
  };
}

/** Checks the JSON body: against `validate` when given (an optional body absent is `{}`), always against the boundary's rule. */
function validateJsonBody(validate: ValidateFunction | undefined, required: boolean, invalid: InvalidResponder): RequestHandler {
  return (req, res, next) => {
    if (req.body === undefined && !required && validate) req.body = {};
    if (refused(problemsOf(validate, req.body), 'body', undefined, invalid, req, res, next)) return;
    next();
  };
}

/**
 * The routes of one public API. Every route goes through `route()`, which registers it on
 * `router` and keeps its declaration for the API document (`openApiDocument`) and for the
 * check that the app serves exactly the documented routes (`finishHttpApp`).
 */
export class ApiRoutes {
  readonly router: Router = express.Router();
  private readonly declared: RouteSpec[] = [];
  /** Each declared route's express handlers (checks, then the route's own), in declaration order. */
  private readonly stacks: { method: HttpMethod; path: string; handlers: RequestHandler[] }[] = [];

  /** The routes in declaration order with the handlers `router` runs for each (`exactRouteDispatcher`). */
  get handlerStacks(): readonly { method: HttpMethod; path: string; handlers: readonly RequestHandler[] }[] {
    return this.stacks;
  }

  constructor(readonly options: ApiRoutesOptions) {}

  get routes(): readonly RouteSpec[] {
    return this.declared;
  }

  route<P extends SchemaId = never, Pa extends SchemaId = never, Q extends SchemaId = never, B extends SchemaId = never, C extends boolean = false>(
    spec: RouteSpec<RouteRequest<P, Pa, Q, B, C>>,
    ...handlers: RouteHandler<RouteRequest<P, Pa, Q, B, C>>[]
  ): void {
    const { contracts } = this.options;
    const where = `${spec.method.toUpperCase()} ${spec.path}`;
    if (this.declared.some((r) => r.method === spec.method && r.path.toLowerCase() === spec.path.toLowerCase())) throw new Error(`${where} is declared twice`);
    const chain: RequestHandler[] = [];
    const limit = spec.rateLimit === undefined ? undefined : this.options.rateLimits?.[spec.rateLimit];
    // Per client first: a flood (of bad keys too) is refused before any key look-up.
    if (limit?.perClient) chain.push(rateCheckHandler(limit.perClient, spec.path, limit.clientOf));
    const auth = spec.auth === 'none' ? undefined : this.options.auth?.[spec.auth];
    if (spec.auth !== 'none') {
      if (!auth) throw new Error(`${where}: unknown auth ${JSON.stringify(spec.auth)}`);
      chain.push(auth.handler);
    }
    if (limit?.perKey) {
      const keyOf = auth?.keyOf;
      if (!keyOf) throw new Error(`${where}: rate limit ${limit.name} counts per key, but auth ${JSON.stringify(spec.auth)} names no key (ApiAuth.keyOf)`);
      chain.push(rateCheckHandler(limit.perKey, spec.path, (_req, res) => keyOf(res)));
    }
    const request: RouteRequest = spec.request ?? {};
    if (request.body) {
      if (!this.options.jsonBody) throw new Error(`${where} has a JSON body but the API has no jsonBody parser`);
      chain.push(this.options.jsonBody);
    }
    chain.push(...(spec.preValidation ?? []));
    const inPath = pathParams(spec.path);
    const propertiesOf = (id: string) => Object.keys((contracts.schema(id).properties ?? {}) as object);
    if (request.params && (request.path || request.query)) throw new Error(`${where}: request.params merges path and query; do not add request.path or request.query`);
    const pathSchema = request.params ?? request.path;
    const declared = pathSchema ? propertiesOf(pathSchema) : [];
    const undeclared = inPath.filter((name) => !declared.includes(name));
    if (undeclared.length) throw new Error(`${where}: path parameters ${undeclared.join(', ')} ${pathSchema ? `are not in ${pathSchema}` : 'need a request.params or request.path schema'}`);
    const invalid = this.options.invalid ?? defaultInvalid;
    const { lookup } = request;
    if (lookup) {
      const unknown = lookup.params.filter((name) => ![request.params, request.path, request.query].some((id) => id && propertiesOf(id).includes(name)));
      if (unknown.length) throw new Error(`${where}: lookup parameters ${unknown.join(', ')} are not in its parameter schemas`);
    }
    if (request.checkedByHandler) {
      // Documented only: the schemas must exist, the handlers answer for the values; the
      // boundary's own rule (no NUL) still holds.
      for (const id of [request.params, request.path, request.query, request.body]) if (id) contracts.schema(id);
      if (request.params || request.path || request.query) chain.push(validateParams(undefined, 'merged', invalid, lookup));
      if (request.body) chain.push(validateJsonBody(undefined, request.bodyRequired ?? true, invalid));
    } else {
      if (request.params) chain.push(validateParams(contracts.validator(request.params), 'merged', invalid, lookup));
      if (request.path) chain.push(validateParams(contracts.validator(request.path), 'path', invalid, lookup));
      if (request.query) chain.push(validateParams(contracts.validator(request.query), 'query', invalid, lookup));
      if (request.body) chain.push(validateJsonBody(contracts.validator(request.body), request.bodyRequired ?? true, invalid));
    }
    if (request.headers) contracts.schema(request.headers);
    if (typeof spec.ok.data === 'string') contracts.schema(spec.ok.data);
    // Validation above makes the typed handlers' view true: express itself types them loosely.
    this.router[spec.method](spec.path, ...chain, ...(handlers as RequestHandler[]));
    this.stacks.push({ method: spec.method, path: spec.path, handlers: [...chain, ...(handlers as RequestHandler[])] });
    this.declared.push(spec);
  }
}

/** A route template as express matches it by default: any case, one optional trailing slash. */
function templateMatcher(path: string): RegExp {
  const literal = (segment: string) => segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : literal(segment)))
    .join('/');
  return new RegExp(`^${pattern}/?$`, 'i');
}

/** An exact path as the dispatcher looks it up: lower case, without one trailing slash. */
const exactKey = (method: string, path: string) => `${method.toUpperCase()} ${(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase()}`;

/** A route without path parameters and the handlers it runs (`exactRouteDispatcher`). */
export interface ExactRoute {
  path: string;
  handlers: readonly RequestHandler[];
  /** `req.route` of its requests (the template for metrics), made once. */
  route: { readonly path: string };
}

/** The routes of `exactRouteDispatcher`, found by method and request path. */
export type ExactRouteTable = (method: string, path: string) => ExactRoute | undefined;

/** The dispatcher's middleware, with its table for a server that looks routes up before express (`serveExactRoutes`). */
export type ExactRouteDispatcher = RequestHandler & { find: ExactRouteTable };

/**
 * Runs an exact route's handlers in order: errors (thrown, rejected or passed on) to `failed`, and a
 * chain that ends without answering gets the app's 404, as it would after the routers.
 */
export function runExactRoute(entry: ExactRoute, req: Request, res: Response, failed: (err: unknown) => void): void {
  // What express's route layer would have set: no path parameters, the template for metrics.
  req.params = {};
  (req as { route?: unknown }).route = entry.route;
  let i = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined && err !== null && err !== 'route' && err !== 'router') return failed(err);
    const handler = entry.handlers[i++];
    if (!handler || err === 'route' || err === 'router') {
      if (!res.headersSent) sendError(res, 404, `no route for ${req.method} ${req.path}`);
      return;
    }
    try {
      const result: unknown = handler(req, res, step);
      if (result instanceof Promise) result.catch((e: unknown) => step(e ?? new Error('rejected promise')));
    } catch (e) {
      step(e);
    }
  };
  step();
}

/**
 * Runs the routes without path parameters (most of every API, the hot ones among them) straight
 * from a table by method and path, instead of walking express's routers layer by layer: the same
 * handlers in the same order (auth, body, checks, the route's own), errors to the app's error
 * handler, `req.route.path` for the metrics. Mount it before the routers of `apis`, in their
 * order (`serveExactRoutes` does, and has them served before express). A path that an earlier
 * route with parameters matches stays with the routers (its answer must not change), as do
 * HEAD-only, OPTIONS and every other request. A chain that ends without answering gets the app's
 * 404, as it would after the routers.
 */
export function exactRouteDispatcher(apis: readonly ApiRoutes[]): ExactRouteDispatcher {
  const table = new Map<string, ExactRoute>();
  const earlier: { method: HttpMethod; matches: RegExp }[] = [];
  for (const api of apis) {
    for (const r of api.handlerStacks) {
      if (pathParams(r.path).length > 0) {
        earlier.push({ method: r.method, matches: templateMatcher(r.path) });
        continue;
      }
      const key = exactKey(r.method, r.path);
      const shadowed = earlier.some((e) => e.method === r.method && e.matches.test(r.path));
      if (!shadowed && !table.has(key)) table.set(key, { path: r.path, handlers: r.handlers, route: Object.freeze({ path: r.path }) });
    }
  }
  const find: ExactRouteTable = (method, path) => table.get(exactKey(method === 'HEAD' ? 'GET' : method, path));
  const dispatch: RequestHandler = (req, res, next) => {
    const entry = find(req.method, req.path);
    if (!entry) return next();
    runExactRoute(entry, req, res, next);
  };
  return Object.assign(dispatch, { find });
}
