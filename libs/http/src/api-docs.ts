import type { Express, Router } from 'express';
import type { ApiRoutes } from './api-routes';
import { msgEnvelope, type EnvelopeStyle } from './envelope';
import { openApiDocument, openApiPath, type ApiInfo, type OpenApiDocument } from './openapi';

/** Where `createHttpApp` keeps its per-path envelope choice and `serveApiDocs` the document. */
export const ENVELOPE_CHOICE = 'chainpipe.envelopeFor';
const DOCUMENT = 'chainpipe.openApiDocument';
const ASYNC_DOCUMENT = 'chainpipe.asyncApiDocument';

/** Paths the docs themselves occupy; they are not part of the API they describe. */
export const DOC_PATHS = ['/openapi.json', '/asyncapi.json', '/docs', '/docs/redoc.standalone.js'] as const;

const REDOC_BUNDLE = 'redoc/bundles/redoc.standalone.js';

function docsPage(title: string): string {
  const escaped = title.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  // Relative URLs: the page keeps working behind a proxy that mounts the app under a prefix.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escaped}</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json" hide-download-button="false"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`;
}

/**
 * Serves the API's OpenAPI document at `/openapi.json` and a page rendering it at `/docs` (Redoc,
 * served from node_modules: no CDN). Both are public: the document holds no secret. Call after
 * the API's routes are declared; `finishHttpApp` then refuses to finish an app whose routes
 * differ from the document.
 */
export function serveApiDocs(app: Express, api: ApiRoutes | readonly ApiRoutes[], info: ApiInfo, extra: { asyncApi?: object } = {}): OpenApiDocument {
  const envelopeFor = (app.locals[ENVELOPE_CHOICE] as ((path: string) => EnvelopeStyle) | undefined) ?? (() => msgEnvelope);
  const document = openApiDocument(api, info, envelopeFor);
  const body = JSON.stringify(document);
  const page = docsPage(info.title);
  const bundle = require.resolve(REDOC_BUNDLE);
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(body);
  });
  if (extra.asyncApi) {
    // The app's WebSockets and callbacks (AsyncAPI 3), beside the HTTP routes.
    const asyncBody = JSON.stringify(extra.asyncApi);
    app.get('/asyncapi.json', (_req, res) => {
      res.type('application/json').send(asyncBody);
    });
    app.locals[ASYNC_DOCUMENT] = extra.asyncApi;
  }
  app.get('/docs', (_req, res) => {
    res.type('text/html').send(page);
  });
  app.get('/docs/redoc.standalone.js', (_req, res, next) => {
    res.sendFile(bundle, { maxAge: '1d' }, (err) => err && next(err));
  });
  app.locals[DOCUMENT] = document;
  return document;
}

/** The AsyncAPI document `serveApiDocs` serves for this app at `/asyncapi.json`, if any. */
export function asyncApiDocumentOf(app: Express): object | undefined {
  return app.locals[ASYNC_DOCUMENT] as object | undefined;
}

/** The document `serveApiDocs` serves for this app, if any. */
export function apiDocumentOf(app: Express): OpenApiDocument | undefined {
  return app.locals[DOCUMENT] as OpenApiDocument | undefined;
}

interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
  router?: Router & { listRoutes?: () => ListedRoute[] };
}

/** Every `METHOD /path` an express app answers through a route (HEAD and OPTIONS left out: express adds them). */
export function registeredRoutes(app: Express): string[] {
  const out: string[] = [];
  const walk = (router: { listRoutes?: () => ListedRoute[] }, prefix: string) => {
    if (!router.listRoutes) throw new Error('express router without listRoutes: routes cannot be compared with the document');
    for (const entry of router.listRoutes()) {
      const path = typeof entry.path === 'string' ? entry.path : String(entry.path);
      const full = (prefix + (path === '/' && entry.router ? '' : path)).replace(/\/+/g, '/') || '/';
      if (entry.router) walk(entry.router, full === '/' ? '' : full);
      else for (const m of entry.methods ?? []) if (m !== 'HEAD' && m !== 'OPTIONS') out.push(`${m === '*' ? 'ALL' : m} ${full}`);
    }
  };
  walk(app.router as unknown as { listRoutes?: () => ListedRoute[] }, '');
  return out;
}

/** Routes the app serves that the document lacks, and documented routes the app does not serve. */
export function compareRoutesWithDocument(app: Express, document: OpenApiDocument): { undocumented: string[]; missing: string[] } {
  const docPaths = new Set<string>(DOC_PATHS);
  const served = registeredRoutes(app)
    .filter((r) => !docPaths.has(r.slice(r.indexOf(' ') + 1)))
    .map((r) => {
      const space = r.indexOf(' ');
      return `${r.slice(0, space)} ${openApiPath(r.slice(space + 1))}`;
    });
  const documented: string[] = [];
  for (const [path, ops] of Object.entries(document.paths)) for (const method of Object.keys(ops)) documented.push(`${method.toUpperCase()} ${path}`);
  return {
    undocumented: served.filter((r) => !documented.includes(r)).sort(),
    missing: documented.filter((r) => !served.includes(r)).sort(),
  };
}

/** Throws naming every difference between what the app serves and its document. */
export function assertRoutesDocumented(app: Express, document: OpenApiDocument): void {
  const { undocumented, missing } = compareRoutesWithDocument(app, document);
  const problems = [...undocumented.map((r) => `undocumented route ${r}`), ...missing.map((r) => `documented route not served: ${r}`)];
  if (problems.length) throw new Error(`API document and routes differ (declare routes with ApiRoutes.route): ${problems.join('; ')}`);
}
