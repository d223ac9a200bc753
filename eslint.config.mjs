import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Layering, held by `no-restricted-imports` (run by `make test`'s lint stage), with no exemption:
 * - an app never imports another app (what two apps share belongs in a lib), and no lib imports an app;
 * - a lib is used through its package, `@chainpipe/<lib>`, or a subpath its package.json exports
 *   (`@chainpipe/runtime/pure`), never its `src/` files (`@chainpipe/<lib>/src/…`, or a relative
 *   path into another package);
 * - the pure domain libs (kline, orders, chains, price, tx-parsers, tx-records) do no I/O: no
 *   database, Redis, Kafka, network or file modules, none of the project's libs that do, and of the
 *   runtime only its pure parts (`@chainpipe/runtime/pure`: its index loads node:http, pino and
 *   prom-client);
 * - bench/ and scripts/ reach an app only through its public entry point (the package,
 *   `@chainpipe/<app>`, or `apps/<app>/src/index.ts`), never a file inside it;
 * - the stand-ins (apps/upstream-sim/src) never import the code they stand in front of: the
 *   libraries that sign and send, and the provider and order code, so a chain's or a
 *   provider's rule is written there from its own documentation, never agreed with by construction.
 * Tests under test/ may reach inside apps: they test them.
 */
const packageDirs = (group) =>
  readdirSync(fileURLToPath(new globalThis.URL(`./${group}`, import.meta.url)), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
const APPS = packageDirs('apps');
const LIBS = packageDirs('libs');
const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const anyOf = (names) => names.map(escapeRegex).join('|');
const APP_PACKAGE = `@chainpipe/(${anyOf(APPS)})`;
const PURE_LIBS = ['kline', 'orders', 'chains', 'price', 'tx-parsers', 'tx-records'];
/** Modules that do I/O, and the project's libs built on them. */
const IO_MODULES = [
  ...['pg', 'knex', 'ioredis', 'kafkajs', 'ws', 'express'],
  ...['http', 'https', 'http2', 'net', 'tls', 'dgram', 'fs', 'fs/promises', 'child_process'].flatMap((m) => [m, `node:${m}`]),
  ...['aggregator', 'custody', 'db', 'http', 'kafka', 'kline-store', 'order-store', 'price-store', 'redis', 'testing', 'tx-store', 'upstreams', 'webhooks'].map((l) => `@chainpipe/${l}`),
];
/** What the code under test is made of, out of the stand-ins' reach (decisions.md, D156). */
const UNDER_TEST = ['custody', 'aggregator', 'orders', 'order-store', 'upstreams', 'webhooks'].map((l) => `@chainpipe/${l}`);

const NO_LIB_INTERNALS = {
  regex: '^@chainpipe/[^/]+/src(/|$)',
  message: "a package is used through @chainpipe/<name> or a subpath its package.json exports, never its src/ files",
};
const NO_APP_FROM_LIB = { regex: `^(\\.\\./)+apps/|^${APP_PACKAGE}(/|$)`, message: 'a lib never imports an app' };

/** What a file of lib `lib` may not import. */
function libPatterns(lib, pure) {
  const others = LIBS.filter((l) => l !== lib);
  const patterns = [
    NO_APP_FROM_LIB,
    NO_LIB_INTERNALS,
    { regex: `^(\\.\\./)+(libs/)?(${anyOf(others)})/`, message: 'a lib uses another through its package (@chainpipe/<lib>), never a relative path into it' },
  ];
  if (pure) {
    patterns.push(
      { regex: `^(${anyOf(IO_MODULES)})$`, message: `the pure domain libs (${PURE_LIBS.join(', ')}) do no I/O` },
      { regex: '^@chainpipe/runtime$', message: "the pure domain libs take the runtime's pure parts from @chainpipe/runtime/pure (its index loads node:http, pino and prom-client)" },
    );
  }
  return patterns;
}

/** What a file of app `app` may not import. */
function appPatterns(app) {
  const others = APPS.filter((a) => a !== app);
  return [
    { regex: `^@chainpipe/(${anyOf(others)})(/|$)|^(\\.\\./)+(apps/|(${anyOf(others)})/)`, message: 'an app never imports another app: what two apps share belongs in a lib' },
    NO_LIB_INTERNALS,
    { regex: '^(\\.\\./)+libs/', message: 'an app uses a lib through its package (@chainpipe/<lib>), never a relative path into it' },
  ];
}

const TOOL_PATTERNS = [
  {
    regex: `^((\\.\\./)+apps/[^/]+/(?!src/index(\\.ts)?$).+|${APP_PACKAGE}/.+)`,
    message: 'bench/ and scripts/ use an app through its entry point (@chainpipe/<app> or apps/<app>/src/index.ts) only',
  },
  NO_LIB_INTERNALS,
  { regex: '^(\\.\\./)+libs/[^/]+/src(/|$)', message: "bench/ and scripts/ use a lib through its package (@chainpipe/<lib>), never its src/ files" },
];

const STAND_IN_PATTERNS = [
  ...appPatterns('upstream-sim'),
  { regex: `^(${anyOf(UNDER_TEST)})(/|$)`, message: 'the stand-ins take the rules of the chains and providers from their documentation, never from the code under test' },
];

const noRestrictedImports = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
// One entry per package (a later entry's rule replaces an earlier one's for the files both match):
// a pure lib's src/ gets its lib's rules and the pure ones, the stand-ins' src/ its app's and theirs.
const layeringConfigs = [
  ...LIBS.map((lib) => ({ files: [`libs/${lib}/**/*.ts`], rules: noRestrictedImports(libPatterns(lib, false)) })),
  ...PURE_LIBS.map((lib) => ({ files: [`libs/${lib}/src/**/*.ts`], rules: noRestrictedImports(libPatterns(lib, true)) })),
  ...APPS.map((app) => ({ files: [`apps/${app}/**/*.ts`], rules: noRestrictedImports(appPatterns(app)) })),
  { files: ['bench/**/*.ts', 'scripts/**/*.ts'], rules: noRestrictedImports(TOOL_PATTERNS) },
  { files: ['apps/upstream-sim/src/**/*.ts'], rules: noRestrictedImports(STAND_IN_PATTERNS) },
];

/*
 * Tables behind repositories: an app reads and writes tables only through its store libraries'
 * repositories (libs/*-store, libs/db), so no `db('<schema>.<table>')` (nor `.from`/`.join` of
 * one), no raw SQL (`.raw(`, `whereRaw`…; express's body parser `express.raw` is not SQL) and no
 * `sql` template in apps' sources, with no exemption.
 */
const TABLE_SCHEMAS = ['agg', 'core', 'kline', 'price', 'tx'];
const tableAccessConfig = {
  files: ['apps/*/src/**/*.ts'],
  rules: {
    'no-restricted-syntax': [
      'error',
      {
        selector: `CallExpression[arguments.0.value=/^(${TABLE_SCHEMAS.join('|')})\\.[a-z_]+( as [a-z_]+)?$/]`,
        message: "an app reaches a table through its store library's repository (libs/*-store), never db('<schema>.<table>')",
      },
      {
        selector: "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(raw|whereRaw|orWhereRaw|andWhereRaw|havingRaw|joinRaw|orderByRaw|groupByRaw)$/]:not([callee.object.name='express'])",
        message: "raw SQL belongs in a store library's repository (libs/*-store), never in an app",
      },
      { selector: "TaggedTemplateExpression[tag.name='sql']", message: "raw SQL belongs in a store library's repository (libs/*-store), never in an app" },
    ],
  },
};

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
  tableAccessConfig,
);
