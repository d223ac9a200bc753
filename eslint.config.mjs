import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Layering, held by `no-restricted-imports` (run by `make test`'s lint stage):
 * - no lib imports an app;
 * - the pure domain libs (kline, orders, chains, price, tx-parsers) do no I/O: no database, Redis, Kafka,
 *   network or file modules, and none of the project's libs that do;
 * - bench/ and scripts/ reach an app only through its public entry point (the package,
 *   `@chainpipe/<app>`, or `apps/<app>/src/index.ts`), never a file inside it;
 * - the stand-ins (apps/upstream-sim/src) never import the code they stand in front of: the
 *   libraries that sign and send, and the provider and order code, so a chain's or a
 *   provider's rule is written there from its own documentation, never agreed with by construction.
 * Imports that broke a rule when it was introduced are listed in LAYERING_EXEMPTIONS, each by
 * file and import, until the code they name moves (none is left).
 */
const APPS = readdirSync(fileURLToPath(new globalThis.URL('./apps', import.meta.url)), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const APP_PACKAGE = `@chainpipe/(${APPS.map(escapeRegex).join('|')})`;
const PURE_LIBS = ['kline', 'orders', 'chains', 'price', 'tx-parsers'];
/** Modules that do I/O, and the project's libs built on them. */
const IO_MODULES = [
  ...['pg', 'knex', 'ioredis', 'kafkajs', 'ws', 'express'],
  ...['http', 'https', 'http2', 'net', 'tls', 'dgram', 'fs', 'fs/promises', 'child_process'].flatMap((m) => [m, `node:${m}`]),
  ...['aggregator', 'db', 'http', 'kafka', 'kline-store', 'order-store', 'price-store', 'redis', 'testing', 'tx-records', 'tx-store', 'upstreams', 'webhooks'].map((l) => `@chainpipe/${l}`),
];
const LAYERING_EXEMPTIONS = {};
/** What the code under test is made of, out of the stand-ins' reach (decisions.md, D156). */
const UNDER_TEST = ['custody', 'aggregator', 'orders', 'order-store', 'upstreams', 'webhooks'].map((l) => `@chainpipe/${l}`);

/** The rule's options for a file: what its layer forbids, less the file's exemptions. */
function layering(file, layer) {
  const allowed = LAYERING_EXEMPTIONS[file] ?? [];
  const except = allowed.length ? `(?!(${allowed.map(escapeRegex).join('|')})$)` : '';
  const patterns = [];
  if (layer === 'lib' || layer === 'pure') {
    patterns.push({ regex: `^(\\.\\./)+apps/|^${APP_PACKAGE}(/|$)`, message: 'a lib never imports an app' });
  }
  if (layer === 'pure') {
    const io = IO_MODULES.filter((m) => !allowed.includes(m));
    patterns.push({ regex: `^(${io.map(escapeRegex).join('|')})$`, message: `the pure domain libs (${PURE_LIBS.join(', ')}) do no I/O` });
  }
  if (layer === 'tool') {
    patterns.push({
      regex: `^${except}((\\.\\./)+apps/[^/]+/(?!src/index(\\.ts)?$).+|${APP_PACKAGE}/.+)`,
      message: 'bench/ and scripts/ use an app through its entry point (@chainpipe/<app> or apps/<app>/src/index.ts) only',
    });
  }
  if (layer === 'stand-in') {
    patterns.push({ regex: `^(${UNDER_TEST.map(escapeRegex).join('|')})(/|$)`, message: 'the stand-ins take the rules of the chains and providers from their documentation, never from the code under test' });
  }
  return { 'no-restricted-imports': ['error', { patterns }] };
}

const layeringConfigs = [
  { files: ['libs/**/*.ts'], rules: layering('', 'lib') },
  { files: PURE_LIBS.map((l) => `libs/${l}/src/**/*.ts`), rules: layering('', 'pure') },
  { files: ['bench/**/*.ts', 'scripts/**/*.ts'], rules: layering('', 'tool') },
  { files: ['apps/upstream-sim/src/**/*.ts'], rules: layering('', 'stand-in') },
  ...Object.keys(LAYERING_EXEMPTIONS).map((file) => ({
    files: [file],
    rules: layering(file, file.startsWith('libs/') ? 'pure' : 'tool'),
  })),
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.kafka/**', '.kafka-test/**', '.run/**', 'test/fixtures/**', 'dist/**', 'dist.new/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'error',
      'no-console': 'off',
    },
  },
  ...layeringConfigs,
);
