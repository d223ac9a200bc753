import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse, parseAllDocuments } from 'yaml';
import { chainOriginConfig } from '@chainpipe/chains';
import { APP_PORTS, appNodeOptions, baseConfig, serviceSection, type AppName, type Field } from '@chainpipe/runtime';
import { simulatorUpstreamEnv } from '@chainpipe/testing';
import { APP_CONFIG_SECTIONS as APP_CONFIG } from '../../scripts/config-doc/app-sections';
import { renderTopicsManifest, K8S_TOPICS_FILE } from '../../scripts/k8s-topics';
import { defaultMetricNames, metricNamesIn, scanRegisteredMetrics, seriesNames, type RegisteredMetric } from './metrics-scan';

/**
 * The operator's files of deploy/ against the code they describe: Prometheus configuration and
 * alert rules (checked and unit-tested by promtool), the Grafana dashboard, the Kubernetes
 * manifests, and the metric table and alert runbooks of docs/operations.md. Metric names come from the code's registrations
 * (metrics-scan.ts) and prom-client's defaults from a real registry.
 */
const ROOT = path.resolve(__dirname, '../..');
const PROM_DIR = path.join(ROOT, 'deploy/prometheus');
const K8S_DIR = path.join(ROOT, 'deploy/k8s');
const APPS = Object.keys(APP_PORTS) as AppName[];
const OPERATIONS_DOC = path.join(ROOT, 'docs/operations.md');
/** The README and every document of docs/: where a chainpipe_* name must be a real metric. */
const PROSE = [path.join(ROOT, 'README.md'), ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(ROOT, 'docs', f))];
type Json = any;

/** Every variable an app validates at boot, as the service kit assembles them. */
const fieldsOf = (app: AppName) => ({ ...baseConfig, ...serviceSection(app, APP_CONFIG[app]) }) as Record<string, Field<unknown>>;
const isRequired = (field: Field<unknown>) => 'error' in field.parse(undefined);
/**
 * The apps asking chain nodes need an origin for every network, which no one variable says:
 * CHAIN_RPC_DEFAULT_BASE, or CHAIN_RPC_URLS listing them all (chainOriginsFromConfig).
 */
const CHAIN_ORIGIN_VARIABLES = ['CHAIN_RPC_DEFAULT_BASE', 'CHAIN_RPC_URLS'] as const;
/** Secrets only a development stack sets: the production image refuses them (docs/decisions.md#d162), so no manifest passes them. */
const DEVELOPMENT_ONLY: readonly string[] = ['DEV_SIGNER_MNEMONIC'];
const asksChainNodes = (app: AppName) => CHAIN_ORIGIN_VARIABLES.every((name) => name in APP_CONFIG[app]);

function promtool(args: string[]): string {
  const r = spawnSync('promtool', args, { cwd: PROM_DIR, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool could not run (${r.error.message}): scripts/dev/system-deps.sh installs it (Debian package prometheus)`);
  const out = `${r.stdout}${r.stderr}`;
  expect(r.status, `promtool ${args.join(' ')}\n${out}`).to.equal(0);
  expect(out, `promtool ${args.join(' ')} reported a problem`).to.not.match(/FAILED|WARNING|error/i);
  return out;
}

describe('deploy/: Prometheus, Grafana, Kubernetes and the metric table of docs/operations.md against the code', function () {
  this.timeout(60_000);
  let registered: RegisteredMetric[];
  /** Every series name a query may use: registered metrics, prom-client defaults, Prometheus' `up`. */
  const known = new Set<string>(['up']);
  const isKnown = (name: string) => known.has(name);

  before(async () => {
    registered = scanRegisteredMetrics();
    for (const m of registered) [m.name, ...seriesNames(m.name, m.type)].forEach((n) => known.add(n));
    for (const [name, type] of await defaultMetricNames()) [name, ...seriesNames(name, type)].forEach((n) => known.add(n));
  });

  describe('metric names', () => {
    it('the scan finds the registrations of every kind of module (libs, apps, scrape-time gauges)', () => {
      const names = registered.map((m) => m.name);
      expect(new Set(names).size, 'a metric name registered twice').to.equal(names.length);
      expect(names).to.include.members(['chainpipe_http_requests_total', 'chainpipe_consumer_lag', 'chainpipe_ready', 'chainpipe_price_source_age_seconds', 'chainpipe_parser_ingest_to_publish_seconds']);
      expect(names.every((n) => n.startsWith('chainpipe_'))).to.equal(true);
    });

    it('the metric table of docs/operations.md lists every metric the code registers, with its type and labels, and nothing else', async () => {
      const operations = readFileSync(OPERATIONS_DOC, 'utf8');
      const start = operations.indexOf('### Metrics\n');
      expect(start, 'docs/operations.md section "### Metrics"').to.be.greaterThan(-1);
      const section = operations.slice(start, operations.indexOf('\n### ', start + 1));
      const rows = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Metric') && !l.startsWith('|---'));
      const table = new Map<string, { type: string; labels: string[] }>();
      const listed = new Set<string>();
      for (const row of rows) {
        const cells = row.split(' | ').map((c) => c.replace(/^\| ?|\|$/g, '').trim());
        const name = /^`(chainpipe_[a-z0-9_]+)`$/.exec(cells[0])?.[1];
        if (name) {
          table.set(name, { type: cells[1], labels: [...cells[2].matchAll(/`([a-z_]+)`/g)].map((l) => l[1]) });
          listed.add(name);
        } else {
          // The row of the other prom-client defaults names them in its last cell.
          for (const n of cells[cells.length - 1].match(/chainpipe_[a-z0-9_]+/g) ?? []) listed.add(n);
        }
      }
      for (const m of registered) {
        expect(table.has(m.name), `${m.name} (${m.file}) is missing from the metric table`).to.equal(true);
        expect(table.get(m.name)!.type, `type of ${m.name}`).to.equal(m.type);
        expect(table.get(m.name)!.labels, `labels of ${m.name}`).to.have.members(m.labels);
      }
      const defaults = await defaultMetricNames();
      for (const [name] of defaults) expect(listed.has(name), `prom-client default ${name} is missing from the metric table`).to.equal(true);
      for (const name of listed) expect(registered.some((m) => m.name === name) || defaults.has(name), `the metric table lists ${name}, which no code registers`).to.equal(true);
      // Elsewhere in the README and the docs too, a chainpipe_* name is a metric (or a database name: the tests', the demo stacks', the benches').
      for (const file of PROSE) {
        const mentioned = new Set(readFileSync(file, 'utf8').match(/chainpipe_[a-z0-9_]+/g) ?? []);
        for (const name of mentioned) if (!/^chainpipe_(test|fault_test|port_offset_\d+|bench(_[a-z]+)?)$/.test(name)) expect(isKnown(name), `${path.relative(ROOT, file)} mentions ${name}, which no code registers`).to.equal(true);
      }
    });
  });

  describe('Prometheus', () => {
    it('promtool accepts both scrape configurations and the rules (lint fatal), and the unit tests of every alert pass', () => {
      promtool(['check', 'config', '--lint-fatal', 'prometheus.yml']);
      promtool(['check', 'config', '--lint-fatal', 'prometheus-k8s.yml']);
      promtool(['check', 'rules', '--lint-fatal', 'alerts.yml']);
      expect(promtool(['test', 'rules', 'tests/alerts.test.yml'])).to.match(/SUCCESS/);
    });

    it('scrapes every app of the port table on its ops port: static targets, and the ops Services in Kubernetes', () => {
      const statics = parse(readFileSync(path.join(PROM_DIR, 'prometheus.yml'), 'utf8')) as Json;
      const targets = statics.scrape_configs.flatMap((j: Json) => (j.static_configs ?? []).map((s: Json) => ({ target: s.targets[0], app: s.labels.app })));
      expect(targets).to.have.deep.members(APPS.map((app) => ({ target: `${app}:${APP_PORTS[app].ops}`, app })));
      const k8s = parse(readFileSync(path.join(PROM_DIR, 'prometheus-k8s.yml'), 'utf8')) as Json;
      const dns = k8s.scrape_configs.flatMap((j: Json) => (j.dns_sd_configs ?? []).map((d: Json) => `${d.names[0]}#${d.port}`));
      expect(dns).to.have.members(APPS.map((app) => `${app}-ops.chainpipe.svc.cluster.local#${APP_PORTS[app].ops}`));
    });

    it('every alert has a severity, a summary and a description, uses registered metrics only, and has unit tests that see it fire and stay silent', () => {
      const rules = (parse(readFileSync(path.join(PROM_DIR, 'alerts.yml'), 'utf8')) as Json).groups.flatMap((g: Json) => g.rules);
      const tests = (parse(readFileSync(path.join(PROM_DIR, 'tests/alerts.test.yml'), 'utf8')) as Json).tests.flatMap((t: Json) => t.alert_rule_test);
      expect(rules.length).to.be.greaterThan(10);
      for (const r of rules) {
        expect(r.alert, 'alert name').to.match(/^Chainpipe[A-Za-z]+$/);
        expect(['critical', 'warning'], `${r.alert} severity`).to.include(r.labels?.severity);
        expect(r.annotations?.summary, `${r.alert} summary`).to.be.a('string').with.length.greaterThan(0);
        expect(r.annotations?.description?.length ?? 0, `${r.alert} description`).to.be.greaterThan(60);
        const used = [...metricNamesIn(r.expr), ...metricNamesIn(r.annotations.summary), ...metricNamesIn(r.annotations.description)];
        for (const name of used) expect(isKnown(name), `${r.alert} uses ${name}, which no code registers`).to.equal(true);
        const own = tests.filter((t: Json) => t.alertname === r.alert);
        expect(own.some((t: Json) => t.exp_alerts?.length > 0), `${r.alert}: a unit test where it fires`).to.equal(true);
        expect(own.some((t: Json) => (t.exp_alerts ?? []).length === 0), `${r.alert}: a unit test where it stays silent`).to.equal(true);
      }
      // Every alert has its runbook, and every runbook an alert.
      const operations = readFileSync(OPERATIONS_DOC, 'utf8');
      const runbooks = operations.slice(operations.indexOf('## Alert runbooks\n'));
      expect(runbooks.length, 'docs/operations.md section "## Alert runbooks"').to.be.lessThan(operations.length);
      const documented = [...runbooks.matchAll(/^### (Chainpipe[A-Za-z]+)$/gm)].map((m) => m[1]);
      expect(documented, 'runbooks in docs/operations.md').to.have.members(rules.map((r: Json) => r.alert));
      // The list: consumer lag, DLQ growth, webhook queue age, upstream feeds, stale quotes, HTTP errors and p99, apps down or not ready.
      const exprs = rules.map((r: Json) => r.expr).join('\n');
      for (const m of ['chainpipe_consumer_lag', 'chainpipe_consumer_dlq_total', 'chainpipe_webhook_queue_oldest_age_seconds', 'chainpipe_market_upstream_sockets', 'chainpipe_price_source_stale', 'chainpipe_price_newest_quote_age_seconds', 'chainpipe_http_requests_total', 'chainpipe_http_request_duration_seconds_bucket', 'chainpipe_ready', 'up{']) {
        expect(exprs, `an alert on ${m}`).to.include(m);
      }
    });
  });

  describe('Grafana', () => {
    const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/chainpipe-overview.json'), 'utf8')) as Json;
    const panels: Json[] = dashboard.panels.filter((p: Json) => p.type !== 'row');

    it('is a dashboard with a Prometheus datasource variable that every panel and query uses', () => {
      expect(dashboard).to.include.keys('uid', 'title', 'schemaVersion', 'panels', 'templating', 'time');
      const ds = dashboard.templating.list.find((v: Json) => v.type === 'datasource');
      expect(ds).to.include({ name: 'datasource', query: 'prometheus' });
      const ids = dashboard.panels.map((p: Json) => p.id);
      expect(new Set(ids).size, 'unique panel ids').to.equal(ids.length);
      for (const p of panels) {
        expect(p.datasource, p.title).to.deep.equal({ type: 'prometheus', uid: '${datasource}' });
        expect(p.gridPos.x + p.gridPos.w, `${p.title} fits the 24 columns`).to.be.at.most(24);
        expect(p.targets, p.title).to.be.an('array').with.length.greaterThan(0);
        for (const t of p.targets) {
          expect(t.datasource.uid, p.title).to.equal('${datasource}');
          expect(t.expr, p.title).to.be.a('string').with.length.greaterThan(0);
        }
      }
    });

    it('every query uses registered metrics, and the panels cover the pipeline', () => {
      const used = new Set<string>();
      for (const p of panels) {
        for (const t of p.targets) {
          const names = metricNamesIn(t.expr);
          expect(names, `${p.title}: ${t.expr} names a metric`).to.have.length.greaterThan(0);
          for (const n of names) {
            expect(isKnown(n), `${p.title} uses ${n}, which no code registers`).to.equal(true);
            used.add(n.replace(/_(bucket|sum|count)$/, ''));
          }
        }
      }
      // Ingest, parse, end-to-end latency, pushes, webhook queue, candles, WebSockets, HTTP per route, consumer lag.
      expect([...used]).to.include.members([
        'chainpipe_ingest_requests_total',
        'chainpipe_parser_records_total',
        'chainpipe_parser_ingest_to_publish_seconds',
        'chainpipe_matcher_pushes_total',
        'chainpipe_webhook_posts_total',
        'chainpipe_webhook_queue_items',
        'chainpipe_kline_candles_published_total',
        'chainpipe_ws_connections',
        'chainpipe_kline_ws_connections',
        'chainpipe_http_requests_total',
        'chainpipe_http_request_duration_seconds',
        'chainpipe_consumer_lag',
      ]);
    });
  });

  describe('Kubernetes', () => {
    const files = (function walk(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.yaml') ? [path.join(dir, e.name)] : []));
    })(K8S_DIR);
    const docs: Array<{ file: string; doc: Json }> = [];
    for (const file of files.filter((f) => path.basename(f) !== 'kustomization.yaml')) {
      for (const d of parseAllDocuments(readFileSync(file, 'utf8'))) {
        if (d.errors.length) throw new Error(`${path.relative(ROOT, file)}: ${d.errors.map((e) => e.message).join('; ')}`);
        docs.push({ file: path.relative(K8S_DIR, file), doc: d.toJS() });
      }
    }
    const find = (kind: string, name: string) => docs.filter((d) => d.doc.kind === kind && d.doc.metadata?.name === name).map((d) => d.doc);
    const common = find('ConfigMap', 'chainpipe-common')[0];
    const secretExample = find('Secret', 'chainpipe-secrets')[0];
    const image = find('Deployment', 'chain-ingest')[0]?.spec.template.spec.containers[0].image;
    const version = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Json).version;

    it('parses: every document has apiVersion, kind and a name', () => {
      expect(docs.length).to.be.greaterThan(APPS.length * 2);
      for (const { file, doc } of docs) {
        expect(doc.apiVersion, file).to.be.a('string');
        expect(doc.kind, file).to.be.a('string');
        expect(doc.metadata?.name, `${file} ${doc.kind}`).to.be.a('string');
      }
      expect(image).to.equal(`chainpipe:${version}`);
    });

    for (const app of APPS) {
      it(`${app}: a Deployment of the compiled app, probes on its ops port, resources, config its config validates`, () => {
        const [deployment] = find('Deployment', app);
        expect(deployment, `Deployment ${app}`).to.not.equal(undefined);
        expect(deployment.spec.selector.matchLabels).to.deep.equal({ 'app.kubernetes.io/name': app });
        expect(deployment.spec.template.metadata.labels).to.include({ 'app.kubernetes.io/name': app });
        const [c] = deployment.spec.template.spec.containers;
        expect(c.image, 'one image for every app').to.equal(image);
        expect(c.command, "node, the app's node options (APP_NODE_OPTIONS), its compiled main").to.deep.equal(['node', ...appNodeOptions(app), `dist/apps/${app}/src/main.js`]);
        expect(existsSync(path.join(ROOT, `apps/${app}/src/main.ts`)), 'the source of the compiled main').to.equal(true);
        const ports = Object.fromEntries(c.ports.map((p: Json) => [p.name, p.containerPort]));
        const ops = APP_PORTS[app].ops;
        const pub = 'public' in APP_PORTS[app] ? (APP_PORTS[app] as { public: number }).public : undefined;
        expect(ports).to.deep.equal(pub ? { http: pub, ops } : { ops });
        const portOf = (p: string | number) => (typeof p === 'number' ? p : ports[p]);
        expect(c.livenessProbe.httpGet.path).to.equal('/healthz');
        expect(portOf(c.livenessProbe.httpGet.port)).to.equal(ops);
        expect(c.readinessProbe.httpGet.path).to.equal('/readyz');
        expect(portOf(c.readinessProbe.httpGet.port)).to.equal(ops);
        for (const kind of ['requests', 'limits']) expect(c.resources[kind], `resources.${kind}`).to.have.keys('cpu', 'memory');
        expect(deployment.spec.template.spec.terminationGracePeriodSeconds * 1000, 'grace period beyond SHUTDOWN_TIMEOUT_MS').to.be.greaterThan(Number(common.data.SHUTDOWN_TIMEOUT_MS));

        const fields = { ...baseConfig, ...APP_CONFIG[app] } as Record<string, Field<unknown>>;
        const env = new Map<string, Json>(c.env.map((e: Json) => [e.name, e]));
        expect(c.envFrom).to.deep.equal([{ configMapRef: { name: 'chainpipe-common' } }]);
        for (const name of env.keys()) expect(fields, `${app} does not validate ${name}`).to.have.property(name);
        expect(env.get('OPS_PORT')?.value).to.equal(String(ops));
        if (pub) expect(env.get('PORT')?.value).to.equal(String(pub));
        for (const [name, field] of Object.entries(fields)) {
          const required = 'error' in field.parse(undefined);
          const set = env.get(name);
          if (DEVELOPMENT_ONLY.includes(name)) {
            // refused by the production image (NODE_ENV=production): never passed, never in the Secret
            expect(set, `${app}: ${name} is for development only`).to.equal(undefined);
            expect(secretExample.stringData, `secret.example.yaml leaves out ${name}`).to.not.have.property(name);
          } else if (field.secret) {
            // Secrets come from the Secret, never as a value in a manifest.
            expect(set?.valueFrom?.secretKeyRef, `${app}: ${name} from chainpipe-secrets`).to.deep.include({ name: 'chainpipe-secrets', key: name });
            expect(set.valueFrom.secretKeyRef.optional ?? false, `${app}: ${name} optional only when the app does not require it`).to.equal(!required);
          } else if (required) {
            expect(set !== undefined || name in common.data, `${app}: required ${name} is set`).to.equal(true);
          }
          if (set?.valueFrom?.secretKeyRef) expect(secretExample.stringData, `secret.example.yaml lists ${name}`).to.have.property(set.valueFrom.secretKeyRef.key);
        }
        if (asksChainNodes(app)) {
          const given = CHAIN_ORIGIN_VARIABLES.filter((name) => {
            const set = env.get(name);
            return set !== undefined && !(set.valueFrom?.secretKeyRef?.optional ?? false);
          });
          expect(given, `${app}: one of ${CHAIN_ORIGIN_VARIABLES.join(', ')} is always set`).to.not.deep.equal([]);
        }
      });

      it(`${app}: a headless ops Service for Prometheus${'public' in APP_PORTS[app] ? ', a Service for its public port' : ''}${'public' in APP_PORTS[app] && app !== 'upstream-sim' ? ' and a PodDisruptionBudget' : ''}`, () => {
        const [ops] = find('Service', `${app}-ops`);
        expect(ops, `Service ${app}-ops`).to.not.equal(undefined);
        expect(ops.spec).to.deep.include({ clusterIP: 'None', publishNotReadyAddresses: true, selector: { 'app.kubernetes.io/name': app } });
        expect(ops.spec.ports).to.deep.equal([{ name: 'ops', port: APP_PORTS[app].ops, targetPort: 'ops' }]);
        if (!('public' in APP_PORTS[app])) {
          expect(find('Service', app)).to.deep.equal([]);
          return;
        }
        const [svc] = find('Service', app);
        expect(svc.spec.selector).to.deep.equal({ 'app.kubernetes.io/name': app });
        expect(svc.spec.ports).to.deep.equal([{ name: 'http', port: APP_PORTS[app].public, targetPort: 'http' }]);
        if (app === 'upstream-sim') return;
        const [pdb] = find('PodDisruptionBudget', app);
        expect(pdb, `PodDisruptionBudget ${app}`).to.not.equal(undefined);
        expect(pdb.spec.selector.matchLabels).to.deep.equal({ 'app.kubernetes.io/name': app });
        expect(find('Deployment', app)[0].spec.replicas, 'a PDB of minAvailable 1 needs two copies to let a node drain').to.be.greaterThan(pdb.spec.minAvailable);
      });
    }

    it('the ConfigMap holds only variables some app validates', () => {
      expect(Object.keys(chainOriginConfig)).to.include.members([...CHAIN_ORIGIN_VARIABLES]);
      const all = new Set([...Object.keys(baseConfig), ...Object.values(APP_CONFIG).flatMap((c) => Object.keys(c))]);
      for (const key of Object.keys(common.data)) expect(all.has(key), `no app validates ${key}`).to.equal(true);
    });

    it('migrations and topics run as Jobs: the compiled migration command of the app image, and the topic definitions of the registry', () => {
      const [migrate] = find('Job', 'chainpipe-migrate');
      const [m] = migrate.spec.template.spec.containers;
      expect(m.image).to.equal(image);
      expect(m.command).to.deep.equal(['node', 'dist/libs/db/src/migrate-cli.js']);
      expect(existsSync(path.join(ROOT, 'libs/db/src/migrate-cli.ts'))).to.equal(true);
      const [topics] = find('Job', 'chainpipe-topics');
      expect(topics.spec.template.spec.volumes).to.deep.equal([{ name: 'topics', configMap: { name: 'chainpipe-topics' } }]);
      expect(readFileSync(K8S_TOPICS_FILE, 'utf8'), 'deploy/k8s/topics.yaml is stale: npx tsx scripts/k8s-topics.ts').to.equal(renderTopicsManifest());
    });

    it('kustomization.yaml names every manifest but the Secret example and the development simulator', () => {
      const k = parse(readFileSync(path.join(K8S_DIR, 'kustomization.yaml'), 'utf8')) as Json;
      const manifests = files.map((f) => path.relative(K8S_DIR, f)).filter((f) => f !== 'kustomization.yaml');
      expect(k.resources).to.have.members(manifests.filter((f) => f !== 'secret.example.yaml' && f !== 'apps/upstream-sim.yaml'));
      expect(k.images).to.deep.equal([{ name: 'chainpipe', newTag: version }]);
    });
  });
  describe('docker-compose.yml', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'deploy/docker-compose.yml'), 'utf8'), { merge: true }) as Json;
    const apps = Object.entries(compose.services as Record<string, Json>).flatMap(([service, def]) => {
      const app = /^dist\/apps\/([a-z-]+)\/src\/main\.js$/.exec(def.command?.[1] ?? '')?.[1];
      return app ? [{ service, app: app as AppName, env: (def.environment ?? {}) as Record<string, unknown> }] : [];
    });

    it('runs compiled apps of the port table', () => {
      expect(apps.map((a) => a.app)).to.include.members(['chain-ingest', 'tx-gateway']);
      for (const { service, app } of apps) expect(APPS, service).to.include(app);
    });

    it('sets every variable each of its apps requires, and an origin for every chain network', () => {
      for (const { service, app, env } of apps) {
        const isSet = (name: string) => env[name] !== undefined && env[name] !== null && String(env[name]) !== '';
        for (const [name, field] of Object.entries(fieldsOf(app))) {
          if (isRequired(field)) expect(isSet(name), `${service}: required ${name} is set`).to.equal(true);
        }
        if (asksChainNodes(app)) expect(CHAIN_ORIGIN_VARIABLES.some(isSet), `${service}: one of ${CHAIN_ORIGIN_VARIABLES.join(', ')} is set`).to.equal(true);
      }
    });

    it('points the upstreams at its simulator, at the paths the simulator serves', () => {
      const expected = simulatorUpstreamEnv('http://upstream-sim:8090');
      const env = compose['x-app'].environment as Record<string, unknown>;
      const upstreams = Object.keys(env).filter((name) => name in expected);
      expect(upstreams.length).to.be.greaterThan(0);
      for (const name of upstreams) expect(env[name], name).to.equal(expected[name]);
    });
  });
});
