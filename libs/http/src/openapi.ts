import { SchemaBundle, type JsonSchema } from '@chainpipe/contracts';
import type { ApiAuth, ApiRoutes, RouteError, RouteSpec } from './api-routes';
import { pathParams } from './api-routes';
import type { EnvelopeStyle } from './envelope';

/** An OpenAPI 3.1 document (only what the generator writes is typed). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes?: Record<string, unknown> };
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  security: Record<string, string[]>[];
  parameters?: { name: string; in: 'path' | 'query' | 'header'; required: boolean; description?: string; schema: JsonSchema }[];
  requestBody?: { required: boolean; description?: string; content: Record<string, { schema?: JsonSchema; example?: unknown }> };
  responses: Record<string, { description: string; headers?: Record<string, { description: string; schema: JsonSchema }>; content?: Record<string, { schema: JsonSchema; example?: unknown }> }>;
}

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  tags?: { name: string; description?: string }[];
}

/** The component name of a schema id (`common/normalized-tx` → `common.normalized-tx`). */
export function componentName(id: string): string {
  return id.replace(/\//g, '.');
}

const MARK = { data: Symbol('data'), code: 987_654_321, message: '\u0000message\u0000' };

/**
 * The JSON Schema of an envelope style, read off the style itself: it builds a body around
 * marker values and every field holding a marker becomes the data, code or message field, every
 * other field the constant the style put there. So a new style needs no schema of its own.
 */
function envelopeSchema(body: unknown, data: JsonSchema, code: JsonSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === MARK.data) properties[key] = data;
    else if (value === MARK.code) properties[key] = code;
    else if (value === MARK.message) properties[key] = { type: 'string' };
    else properties[key] = { const: value };
  }
  return { type: 'object', required: Object.keys(properties), properties };
}

/** The 429 of a route with a rate limit (`RouteSpec.rateLimit`). */
const RATE_LIMITED = 'too many requests: past the rate limit of the client address or of the key (`Retry-After` gives the seconds to wait)';

const GENERATED_ERRORS: Record<number, string> = {
  500: 'internal error (details are logged, never returned)',
  504: 'the request ran past the deadline (15 s)',
};

function operationId(spec: RouteSpec): string {
  if (spec.operationId) return spec.operationId;
  const words = spec.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [spec.method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

/** `/a/:b` → `/a/{b}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:(\w+)/g, '{$1}');
}

/**
 * The OpenAPI 3.1 document of an API: every declared route with its parameters, body, success
 * and error responses in the route's envelope (`envelopeFor(path)`, the same choice the app makes
 * at run time), and the schemas of `schemas/` they use.
 */
export function openApiDocument(apis: ApiRoutes | readonly ApiRoutes[], info: ApiInfo, envelopeFor: (path: string) => EnvelopeStyle): OpenApiDocument {
  const list: readonly ApiRoutes[] = Array.isArray(apis) ? apis : [apis as ApiRoutes];
  if (!list.length) throw new Error('an API document needs at least one ApiRoutes');
  const contracts = list[0].options.contracts;
  const components = new SchemaBundle(contracts, { name: componentName, prefix: '#/components/schemas/' });
  const paths: OpenApiDocument['paths'] = {};
  const authSchemes: Record<string, ApiAuth> = {};
  // Several APIs of one app (the market gateway's price and candlestick services) share the
  // document: one scheme name must mean one scheme.
  for (const api of list) {
    for (const [name, auth] of Object.entries(api.options.auth ?? {})) {
      if (authSchemes[name] && authSchemes[name] !== auth) throw new Error(`auth scheme ${name} is declared differently by two APIs of one document`);
      authSchemes[name] = auth;
    }
  }
  const used = new Set<string>();

  for (const spec of list.flatMap((a) => a.routes)) {
    const envelope = envelopeFor(spec.path);
    const request = spec.request ?? {};
    const op: OpenApiOperation = {
      operationId: operationId(spec),
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      ...(spec.tags ? { tags: [...spec.tags] } : {}),
      security: spec.auth === 'none' ? [] : [{ [spec.auth]: [] }],
      responses: {},
    };
    if (spec.auth !== 'none') used.add(spec.auth);

    const parameters: NonNullable<OpenApiOperation['parameters']> = [];
    const inPath = pathParams(spec.path);
    const addParameters = (schemaId: string, where: (name: string) => 'path' | 'query' | 'header') => {
      const schema = contracts.schema(schemaId);
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const name of Object.keys((schema.properties ?? {}) as object)) {
        const property = components.property(schemaId, name);
        const position = where(name);
        parameters.push({
          name,
          in: position,
          required: position === 'path' || required.has(name),
          ...(typeof property.description === 'string' ? { description: property.description } : {}),
          schema: property,
        });
      }
    };
    if (request.params) addParameters(request.params, (name) => (inPath.includes(name) ? 'path' : 'query'));
    if (request.path) addParameters(request.path, () => 'path');
    if (request.query) addParameters(request.query, () => 'query');
    if (request.headers) addParameters(request.headers, () => 'header');
    if (parameters.length) op.parameters = parameters;

    if (request.body) {
      op.requestBody = { required: request.bodyRequired ?? true, content: { 'application/json': { schema: components.ref(request.body), ...(request.bodyExample !== undefined ? { example: request.bodyExample } : {}) } } };
    } else if (request.rawBody) {
      op.requestBody = { required: true, description: request.rawBody.description, content: { [request.rawBody.mediaType]: {} } };
    }

    // One component per envelope style: every error response of the style refers to it.
    const errorComponent = `error-envelope.${envelope.name}`;
    components.schemas[errorComponent] ??= envelope.errorSchema ?? envelopeSchema(envelope.error(0, MARK.code, MARK.message), {}, { type: 'integer' });
    const errorSchema = { $ref: `#/components/schemas/${errorComponent}` };

    const ok = spec.ok;
    const data = components.use(ok.data);
    const okCode = ok.code ?? 0;
    const okMessage = ok.message ?? 'success';
    const okSchema = ok.bare ? data : envelopeSchema(envelope.ok(MARK.data, MARK.code, MARK.message), data, { const: okCode });
    op.responses[String(ok.status ?? 200)] = {
      description: ok.businessErrors ? `${ok.description}; or the error envelope: ${ok.businessErrors}` : ok.description,
      content: {
        [ok.bare ? (ok.mediaType ?? 'application/json') : 'application/json']: {
          schema: ok.businessErrors ? { oneOf: [okSchema, errorSchema] } : okSchema,
          ...(ok.example !== undefined ? { example: ok.bare ? ok.example : envelope.ok(ok.example, okCode, okMessage) } : {}),
        },
      },
    };

    const errors: Record<number, RouteError> = {};
    if (request.params || request.path || request.query || request.body) errors[400] = 'request validation failed (the message names the fields)';
    if (request.body) {
      errors[400] = 'invalid JSON, or request validation failed (the message names the fields)';
      errors[413] = 'request body too large';
    }
    if (spec.auth !== 'none') Object.assign(errors, authSchemes[spec.auth]?.errors);
    if (spec.rateLimit !== undefined) errors[429] = RATE_LIMITED;
    Object.assign(errors, GENERATED_ERRORS, spec.errors);
    for (const [status, error] of Object.entries(errors)) {
      if (typeof error === 'string') {
        op.responses[status] = { description: error, content: { 'application/json': { schema: errorSchema, example: envelope.error(Number(status), Number(status), error) } } };
        if (error === RATE_LIMITED) op.responses[status].headers = { 'Retry-After': { description: 'whole seconds until the limit allows again', schema: { type: 'integer', minimum: 1 } } };
      } else {
        op.responses[status] = { description: error.description, content: { [error.mediaType]: { schema: { type: 'string' }, ...(error.example !== undefined ? { example: error.example } : {}) } } };
      }
    }

    const path = openApiPath(spec.path);
    paths[path] ??= {};
    paths[path][spec.method] = op;
  }

  const securitySchemes: Record<string, unknown> = {};
  for (const name of [...used].sort()) securitySchemes[name] = authSchemes[name].scheme;
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    ...(info.tags ? { tags: info.tags } : {}),
    paths,
    components: { schemas: components.schemas, ...(used.size ? { securitySchemes } : {}) },
  };
}
