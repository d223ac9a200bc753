import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import type { Express } from 'express';
import { Registry } from 'prom-client';
import { parseChainOrigins } from '@chainpipe/chains';
import { loadContracts } from '@chainpipe/contracts';
import { createDb } from '@chainpipe/db';
import { createRedis } from '@chainpipe/redis';
import { apiDocumentOf, asyncApiDocumentOf, compareRoutesWithDocument, type OpenApiDocument } from '@chainpipe/http';
import { SecretBox, createLogger, loadConfig, systemClock } from '@chainpipe/runtime';
import { testDepositAddresses } from '@chainpipe/testing';
import { createAggregatorGatewayApp } from '../../apps/aggregator-gateway/src/app';
import { orderConfig } from '../../apps/aggregator-gateway/src/orders/config';
import { ordersModule } from '../../apps/aggregator-gateway/src/orders/module';
import { NO_CHANNELS } from '../../apps/aggregator-gateway/src/orders/ports';
import { quotesModule } from '../../apps/aggregator-gateway/src/quotes/module';
import { createIngestApp } from '../../apps/chain-ingest/src/app';
import { createMarketGatewayApp } from '../../apps/market-gateway/src/app';
import { klineModule } from '../../apps/market-gateway/src/kline/module';
import { priceModule } from '../../apps/market-gateway/src/price/module';
import { createTxGatewayApp } from '../../apps/tx-gateway/src/app';
import { txGatewayModules } from '../../apps/tx-gateway/src/modules';

/**
 * Every public gateway's API document against the app itself: built in-process with inert
 * dependencies (nothing is called: no request is made, the database is never connected), so the
 * check needs no broker or database. A new gateway adds one line to GATEWAYS.
 */
const contracts = loadContracts();
const logger = createLogger({ name: 'contract-test', level: 'silent' });
const db = createDb({ url: 'postgres://127.0.0.1:1/never-connected' });
const redis = createRedis({ url: 'redis://127.0.0.1:1', extra: { lazyConnect: true } });
const inert = {
  contracts,
  logger,
  db,
  producer: { publish: () => Promise.reject(new Error('inert')), reachable: true },
  retryWebhooks: () => Promise.reject(new Error('inert')),
  poolTrades: undefined as never,
  resolveKey: () => Promise.resolve(undefined),
  origins: parseChainOrigins('', null),
  rpcProxy: { origins: parseChainOrigins('', null), maxAnswerBytes: 1024 },
  secretBox: new SecretBox('0'.repeat(64)),
  rpcTimeoutMs: 1000,
  allowPrivateWebhookTargets: false,
  clock: systemClock,
  streamSecret: 'inert',
  bodyLimitBytes: 1024,
  timeoutMs: 1000,
};
const registry = () => ({ registry: new Registry() });
const upstream = { baseUrl: 'http://127.0.0.1:1', apiKey: 'inert', timeoutMs: 1000 };

function marketGateway(): Express {
  const deps = { ...inert, ...registry(), redis };
  return createMarketGatewayApp({
    logger,
    registry: deps.registry,
    timeoutMs: 1000,
    modules: [
      priceModule({ ...deps, freshness: { quoteMaxAgeMs: 60_000, fiatRatesMaxAgeMs: 60_000 }, referenceRefreshMs: 60_000, poolUpstream: upstream, poolCacheTtlMs: 3_600_000 }),
      klineModule({ ...deps, publishPoolNotice: () => Promise.reject(new Error('inert')), market: upstream, ws: { pingMs: 30_000, maxBufferedBytes: 1 << 20 } }),
    ],
  });
}

function aggregatorGateway(): Express {
  const deps = { ...inert, ...registry(), redis };
  const orders = ordersModule({ ...deps, channels: NO_CHANNELS, depositAddresses: testDepositAddresses(), config: loadConfig(orderConfig, {}), bodyLimitBytes: 1024 });
  const quotes = quotesModule({ ...deps, adapters: [], bodyLimitBytes: 1024, upstreamTimeoutMs: 1000, heartbeatMs: 1000 });
  return createAggregatorGatewayApp({ logger, registry: deps.registry, timeoutMs: 1000, modules: [quotes, orders] });
}

function txGateway(): Express {
  const deps = { ...inert, ...registry() };
  return createTxGatewayApp({ logger, registry: deps.registry, timeoutMs: 1000, modules: txGatewayModules(deps) });
}

/** `sockets`: the WebSocket and SSE paths of the gateway, which its AsyncAPI document must describe. */
const GATEWAYS: { name: string; build: () => Express; sockets: string[] }[] = [
  { name: 'tx-gateway', build: txGateway, sockets: ['/tx/api/v1/transaction/ws'] },
  { name: 'chain-ingest', build: () => createIngestApp({ ...inert, ...registry() }), sockets: [] },
  { name: 'market-gateway', build: marketGateway, sockets: ['/kline/api/v1/kline/ws', '/kline/api/v1/ws/{topic}'] },
  { name: 'aggregator-gateway', build: aggregatorGateway, sockets: ['/api/v2/quote/stream'] },
];

/** Validates examples against the document's own schemas (envelopes included), as a client would read them. */
function exampleChecker(document: OpenApiDocument) {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'document', components: document.components });
  return (schema: unknown, example: unknown): string | undefined => {
    const validate = ajv.compile({ $id: `example-${Math.random()}`, allOf: [rebase(schema)] });
    return validate(example) ? undefined : ajv.errorsText(validate.errors);
  };
}

/** Component refs point into the document schema registered under `document`. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') ? `document${v}` : k === 'example' ? v : rebase(v)]),
  );
}

/** 10 digits: more than an int4 column holds. A parameter of digits (only) taking it needs its column's `decimalMaximum`. */
const PAST_INT4 = '9999999999';

/**
 * Where a request value of an operation can be an integer without its column's bound (the
 * boundary's rule, docs/development.md, "The boundary's rule"): a JSON integer without `maximum`, a path or
 * query parameter of digits without `decimalMaximum`.
 */
function unboundedIntegers(document: OpenApiDocument): string[] {
  const out: string[] = [];
  const resolve = (ref: string): unknown => ref.slice(2).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~')).reduce<any>((node, k) => node?.[k], document);
  const walk = (node: any, where: string, digitStrings: boolean, seen: Set<unknown>): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (typeof node.$ref === 'string') return walk(resolve(node.$ref), where, digitStrings, seen);
    const types = ([] as unknown[]).concat(node.type ?? []);
    if (types.includes('integer') && node.maximum === undefined) out.push(`${where}: integer without maximum`);
    const digits = typeof node.pattern === 'string' && ((re) => re.test(PAST_INT4) && !re.test('x') && !re.test('9x'))(new RegExp(node.pattern));
    if (digitStrings && types.includes('string') && digits && node.decimalMaximum === undefined) {
      out.push(`${where}: digit string without decimalMaximum`);
    }
    for (const [k, v] of Object.entries(node.properties ?? {})) walk(v, `${where}.${k}`, digitStrings, seen);
    if (node.items) walk(node.items, `${where}[]`, digitStrings, seen);
    for (const key of ['anyOf', 'oneOf', 'allOf']) for (const sub of node[key] ?? []) walk(sub, where, digitStrings, seen);
  };
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(operations) as [string, any][]) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) walk(p.schema, `${where} ${p.in} ${p.name}`, p.in !== 'header', new Set());
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) walk(body, `${where} body`, false, new Set());
    }
  }
  return out;
}

after(async () => {
  await db.destroy();
  redis.disconnect();
});

for (const gateway of GATEWAYS) {
  describe(`API document of ${gateway.name}`, () => {
    let app: Express;
    let document: OpenApiDocument;

    before(() => {
      app = gateway.build();
      const served = apiDocumentOf(app);
      expect(served, 'the app serves no /openapi.json (serveApiDocs)').to.not.equal(undefined);
      document = served!;
    });

    it('documents exactly the routes the app serves', () => {
      expect(compareRoutesWithDocument(app, document)).to.deep.equal({ undocumented: [], missing: [] });
      expect(Object.keys(document.paths).length).to.be.greaterThan(0);
    });

    it('serves an AsyncAPI document of its WebSockets, each of them a documented route', async function () {
      const asyncDoc = asyncApiDocumentOf(app);
      if (!gateway.sockets.length && !asyncDoc) return this.skip();
      expect(asyncDoc, 'no /asyncapi.json').to.not.equal(undefined);
      const { document: parsed, diagnostics } = await new Parser().parse(structuredClone(asyncDoc) as never);
      expect(diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => `${d.path.join('.')}: ${d.message}`)).to.deep.equal([]);
      const addresses = parsed!.channels().all().map((c) => c.address() ?? '');
      expect(addresses).to.include.members(gateway.sockets);
      for (const address of addresses.filter((a) => a.startsWith('/'))) {
        expect(document.paths[address], `${address} is a channel but not a route`).to.have.property('get');
      }
    });

    it('bounds every integer a request takes by the column it meets (maximum, decimalMaximum)', () => {
      expect(unboundedIntegers(document)).to.deep.equal([]);
    });

    it('is a valid OpenAPI 3.1 document (swagger-parser)', async () => {
      const api = await SwaggerParser.validate(structuredClone(document) as never);
      expect((api as { openapi?: string }).openapi).to.equal('3.1.0');
    });

    it('has a description, success and error responses for every operation, and examples that satisfy their schemas', () => {
      const check = exampleChecker(document);
      let examples = 0;
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          const where = `${method.toUpperCase()} ${path}`;
          // 101 is the success of a WebSocket upgrade.
          expect(Object.keys(op.responses).some((s) => s.startsWith('2') || s === '101'), `${where}: no success response`).to.equal(true);
          expect(op.responses, `${where}: no 500`).to.have.property('500');
          const contents = [
            ...Object.values(op.responses).flatMap((r) => Object.values(r.content ?? {})),
            ...Object.values(op.requestBody?.content ?? {}),
          ];
          for (const parameter of op.parameters ?? []) {
            for (const example of (parameter.schema as { examples?: unknown[] }).examples ?? []) {
              expect(check(parameter.schema, example), `${where}: example of ${parameter.in} ${parameter.name} does not match its schema`).to.equal(undefined);
            }
          }
          for (const content of contents) {
            if (content.example === undefined || !content.schema) continue;
            expect(check(content.schema, content.example), `${where}: example does not match its schema`).to.equal(undefined);
            examples++;
          }
        }
      }
      expect(examples).to.be.greaterThan(Object.keys(document.paths).length);
    });
  });
}
