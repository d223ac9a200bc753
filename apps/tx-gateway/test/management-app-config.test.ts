import { expect } from 'chai';
import { loadContracts } from '@chainpipe/contracts';
import { SecretBox } from '@chainpipe/runtime';
import {
  CONFIG_DEFAULTS,
  attemptsView,
  configView,
  insertValues,
  planReplace,
  planUpdate,
  retryStatusView,
  sealColumns,
  touchesDelivery,
  type AppConfigRow,
} from '../src/management/app-config';
import { checkWebhookUrl, isBlockedAddress } from '@chainpipe/webhooks';

describe('webhook target check', () => {
  const refused = (url: string, allowPrivate = false) => {
    const check = checkWebhookUrl(url, { allowPrivate });
    if (check.ok) throw new Error(`${JSON.stringify(url)} was accepted`);
    return check.reason;
  };

  it('accepts https URLs of public hosts, with ports, paths and queries, and keeps them as written', () => {
    for (const url of ['https://hooks.example.com/cb', 'https://hooks.example.com:8443/a/b?x=1&y=2', 'https://93.184.216.34/hook', 'https://[2606:2800:220:1:248:1893:25c8:1946]/hook', 'https://EXAMPLE.org']) {
      expect(checkWebhookUrl(url)).to.deep.equal({ ok: true, url });
    }
  });

  it('refuses loopback, link-local (cloud metadata), private and reserved IP literals, in every spelling', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.1/',
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/',
      'https://%31%32%37.0.0.1/',
      'https://0/',
      'https://[::1]/',
      'https://[0:0:0:0:0:0:0:1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:169.254.169.254]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.1.2.3/',
      'https://172.16.0.1/',
      'https://172.31.255.255/',
      'https://192.168.1.1/',
      'https://100.64.0.1/',
      'https://[fe80::1]/',
      'https://[fd00::1]/',
      'https://[64:ff9b::7f00:1]/',
      'https://224.0.0.1/',
      'https://255.255.255.255/',
    ]) {
      expect(refused(url), url).to.match(/loopback, private, link-local or reserved/);
    }
  });

  it('refuses internal host names', () => {
    for (const url of ['https://localhost/', 'https://LOCALHOST./x', 'https://api.localhost/', 'https://metadata.google.internal/', 'https://printer.local/', 'https://kafka/', 'https://router.home.arpa/']) {
      expect(refused(url), url).to.match(/public host/);
    }
  });

  it('refuses other schemes, plain http, credentials and what is not a URL', () => {
    expect(refused('http://127.0.0.1')).to.match(/https/);
    expect(refused('http://[::1]')).to.match(/https/);
    expect(refused('http://169.254.169.254')).to.match(/https/);
    expect(refused('http://hooks.example.com/cb')).to.match(/https/);
    expect(refused('file:///etc/passwd')).to.match(/https/);
    expect(refused('javascript:alert(1)')).to.match(/https/);
    expect(refused('javascript:')).to.match(/https/);
    expect(refused('ftp://example.com/')).to.match(/https/);
    expect(refused('http://user:pw@x')).to.match(/https/);
    expect(refused('https://user:pw@hooks.example.com/')).to.match(/credentials/);
    expect(refused('https://user@hooks.example.com/')).to.match(/credentials/);
    expect(refused('https://hooks.example.com/a b')).to.match(/whitespace/);
    expect(refused('https://exa\nmple.com/')).to.match(/whitespace/);
    expect(refused(' https://hooks.example.com/')).to.match(/whitespace/);
    expect(refused('https://hooks.example.com/\u0000x')).to.match(/control characters/);
    expect(refused('https://hooks.example.com/\u007f')).to.match(/control characters/);
    expect(refused('hooks.example.com/cb')).to.match(/absolute URL/);
    expect(refused('/relative')).to.match(/absolute URL/);
    expect(refused('')).to.match(/absolute URL/);
    expect(refused(`https://hooks.example.com/${'a'.repeat(2048)}`)).to.match(/2048/);
  });

  it('with allowPrivate (development): plain http and local receivers, still no credentials or other schemes', () => {
    for (const url of ['http://127.0.0.1:9999/hook', 'http://localhost:3000/', 'https://[::1]/', 'http://10.0.0.5/']) {
      expect(checkWebhookUrl(url, { allowPrivate: true })).to.deep.equal({ ok: true, url });
    }
    expect(refused('http://user:pw@127.0.0.1/', true)).to.match(/credentials/);
    expect(refused('file:///etc/passwd', true)).to.match(/https/);
  });

  it('isBlockedAddress: for the deliverer to check resolved addresses', () => {
    expect(isBlockedAddress('127.0.0.1')).to.equal(true);
    expect(isBlockedAddress('::ffff:10.0.0.1')).to.equal(true);
    expect(isBlockedAddress('8.8.8.8')).to.equal(false);
    expect(isBlockedAddress('2001:4860:4860::8888')).to.equal(false);
    expect(isBlockedAddress('not-an-ip')).to.equal(false);
  });
});

describe('app config merge rules', () => {
  const url = 'https://hooks.example.com/cb';

  it('POST replaces: every field not given takes its default, the secret included', () => {
    expect(planReplace({ enable_webhook: true, webhook_url: url })).to.deep.equal({
      ok: true,
      values: { enable_ws: true, enable_webhook: true, webhook_url: url, webhook_secret: null, ws_ack_resend_interval_seconds: 30, is_active: true },
    });
    expect(planReplace({})).to.deep.equal({ ok: true, values: { ...CONFIG_DEFAULTS } });
  });

  it('POST refuses is_active (PUT only)', () => {
    expect(planReplace({ is_active: false })).to.deep.equal({ ok: false, error: 'is_active can only be changed with PUT' });
  });

  it('PUT changes only what it names; null clears, an empty secret counts as none', () => {
    expect(planUpdate({ ws_ack_resend_interval_seconds: 5 })).to.deep.equal({ ok: true, values: { ws_ack_resend_interval_seconds: 5 } });
    expect(planUpdate({ webhook_url: null, webhook_secret: '' })).to.deep.equal({ ok: true, values: { webhook_url: null, webhook_secret: null } });
    expect(planUpdate({ is_active: false, webhook_secret: 's3cr3t' })).to.deep.equal({ ok: true, values: { is_active: false, webhook_secret: 's3cr3t' } });
    expect(planUpdate({})).to.deep.equal({ ok: true, values: {} });
    // On an application without configuration, PUT starts from the defaults.
    expect(insertValues({ enable_ws: false })).to.deep.equal({ ...CONFIG_DEFAULTS, enable_ws: false });
  });

  it('both check the webhook target', () => {
    expect(planReplace({ webhook_url: 'https://169.254.169.254/' })).to.deep.equal({ ok: false, error: 'webhook_url must not point to a loopback, private, link-local or reserved address' });
    expect(planUpdate({ webhook_url: 'ftp://x.example.com/' })).to.deep.equal({ ok: false, error: 'webhook_url must use https' });
    expect(planUpdate({ webhook_url: 'http://127.0.0.1:8080/' }, { allowPrivate: true })).to.deep.equal({ ok: true, values: { webhook_url: 'http://127.0.0.1:8080/' } });
  });

  it('sealColumns stores the secret sealed (opens to the same text), keeps null and leaves it out when not given', () => {
    const box = new SecretBox('ab'.repeat(32));
    const seal = (p: string) => box.seal(p);
    const sealed = sealColumns({ webhook_secret: 'my-secret', enable_ws: false }, seal);
    expect(Object.keys(sealed).sort()).to.deep.equal(['enable_ws', 'webhook_secret_enc']);
    expect(sealed.webhook_secret_enc).to.not.include('my-secret');
    expect(box.open(sealed.webhook_secret_enc!)).to.equal('my-secret');
    expect(sealColumns({ webhook_secret: null }, seal)).to.deep.equal({ webhook_secret_enc: null });
    expect(sealColumns({ enable_ws: true }, seal)).to.deep.equal({ enable_ws: true });
  });

  it('schemas: types, ranges, unknown fields and the Sign-header-safe secret', () => {
    const contracts = loadContracts();
    const post = (b: unknown) => contracts.validate('http/tx/app-config-post', b);
    const put = (b: unknown) => contracts.validate('http/tx/app-config-put', b);
    expect(post({ enable_ws: 'yes' })).to.deep.equal({ ok: false, errors: 'enable_ws must be boolean' });
    expect(post({ ws_ack_resend_interval_seconds: 0 })).to.deep.equal({ ok: false, errors: 'ws_ack_resend_interval_seconds must be >= 1' });
    expect(post({ ws_ack_resend_interval_seconds: 3601 })).to.deep.equal({ ok: false, errors: 'ws_ack_resend_interval_seconds must be <= 3600' });
    expect(post({ ws_ack_resend_interval_seconds: 1.5 })).to.deep.equal({ ok: false, errors: 'ws_ack_resend_interval_seconds must be integer' });
    expect(post({ webhook_url: 5 })).to.deep.equal({ ok: false, errors: 'webhook_url must be string,null' });
    expect(post({ webhook_secret: 'a\r\nX-Injected: 1' })).to.deep.equal({ ok: false, errors: 'webhook_secret must match pattern "^[\\x20-\\x7e]*$"' });
    expect(post({ is_active: true })).to.deep.equal({ ok: false, errors: 'is_active is not allowed' });
    expect(post({ enable_websocket: true })).to.deep.equal({ ok: false, errors: 'enable_websocket is not allowed' });
    expect(post([])).to.deep.equal({ ok: false, errors: '(root) must be object' });
    expect(put({ is_active: false, webhook_url: null, webhook_secret: null })).to.deep.equal({ ok: true });
  });
});

describe('app config views', () => {
  const row: AppConfigRow = {
    app_id: 'app-x',
    enable_ws: true,
    enable_webhook: false,
    webhook_url: 'https://hooks.example.com/cb',
    webhook_secret_enc: 'v1.aaa.bbb.ccc',
    ws_ack_resend_interval_seconds: 30,
    webhook_delivery_status: 'disabled',
    webhook_retrying_since: '1700000000',
    webhook_last_failed_transaction_id: '12345',
    webhook_last_failure_reason: 'HTTP 500',
    is_active: true,
    created_at: new Date('2026-01-02T03:04:05.678Z'),
    updated_at: new Date('2026-01-03T00:00:00.000Z'),
  };

  it('GET shows the spec fields only: no secret, bigints as numbers, ISO timestamps', () => {
    const view = configView(row);
    expect(view).to.deep.equal({
      app_id: 'app-x',
      enable_ws: true,
      enable_webhook: false,
      webhook_url: 'https://hooks.example.com/cb',
      ws_ack_resend_interval_seconds: 30,
      webhook_delivery_status: 'disabled',
      webhook_retrying_since: 1700000000,
      webhook_last_failed_transaction_id: 12345,
      webhook_last_failure_reason: 'HTTP 500',
      is_active: true,
      created_at: '2026-01-02T03:04:05.678Z',
      updated_at: '2026-01-03T00:00:00.000Z',
    });
    expect(JSON.stringify(view)).to.not.include('v1.aaa');
  });

  it('retry status: queue summary in Unix seconds; defaults for an application without configuration', () => {
    expect(retryStatusView('app-x', row, { pending: 3, nextAttemptAtMs: 1_700_000_123_999 })).to.deep.equal({
      app_id: 'app-x',
      enable_webhook: false,
      webhook_delivery_status: 'disabled',
      webhook_retrying_since: 1700000000,
      webhook_last_failed_transaction_id: 12345,
      webhook_last_failure_reason: 'HTTP 500',
      pending: 3,
      next_retry_at: 1_700_000_123,
    });
    expect(retryStatusView('app-y', undefined, { pending: 0, nextAttemptAtMs: null })).to.deep.equal({
      app_id: 'app-y',
      enable_webhook: false,
      webhook_delivery_status: 'active',
      webhook_retrying_since: null,
      webhook_last_failed_transaction_id: null,
      webhook_last_failure_reason: null,
      pending: 0,
      next_retry_at: null,
    });
  });
});

describe('webhook attempts view and configuration writes that touch delivery', () => {
  const contracts = loadContracts();
  const hashes = ['0x' + 'a1'.repeat(32), '0x' + 'b2'.repeat(32), '0x' + 'c3'.repeat(32)];
  const row = (id: string, delivered: boolean) => ({
    id,
    attempted_at: '1763717400250',
    path: delivered ? ('live' as const) : ('retry' as const),
    webhook_id: `b${id.repeat(31)}`,
    tx_hashes: hashes as string[] | null,
    transactions: 3,
    delivered,
    status_code: delivered ? 200 : null,
    error: delivered ? null : 'no response in 10000 ms',
    latency_ms: delivered ? 41 : 10_002,
    next_retry_at: delivered ? null : '1763717404250',
  });

  it('shows stored attempts with ISO times and retry seconds; a full page has the last id as its cursor', () => {
    const view = attemptsView([row('9', false), row('7', true)], 2);
    expect(view.items[0]).to.deep.equal({
      id: '9',
      attempted_at: '2025-11-21T09:30:00.250Z',
      path: 'retry',
      webhook_id: `b${'9'.repeat(31)}`,
      tx_hashes: hashes,
      transactions: 3,
      delivered: false,
      status_code: null,
      error: 'no response in 10000 ms',
      latency_ms: 10_002,
      next_retry_at: 1_763_717_404,
    });
    expect(view.next_cursor).to.equal('7');
    expect(contracts.validate('http/tx/webhook-attempts', view)).to.deep.equal({ ok: true });
    expect(attemptsView([row('7', true)], 2).next_cursor).to.equal(null);
    expect(attemptsView([], 20)).to.deep.equal({ items: [], next_cursor: null });
    // Logged before the POST's id and hashes were kept: null id, no hashes.
    const older = attemptsView([{ ...row('3', true), webhook_id: null, tx_hashes: null }], 20);
    expect(older.items[0]).to.include({ webhook_id: null }).and.to.have.deep.property('tx_hashes', []);
    expect(contracts.validate('http/tx/webhook-attempts', older)).to.deep.equal({ ok: true });
  });

  it('a write touches delivery when it sets the switch, the target, the secret or the activation', () => {
    for (const input of [{ enable_webhook: true }, { enable_webhook: false }, { webhook_url: null }, { webhook_secret: 'x' }, { is_active: true }]) expect(touchesDelivery(input), JSON.stringify(input)).to.equal(true);
    for (const input of [{}, { enable_ws: false }, { ws_ack_resend_interval_seconds: 60 }]) expect(touchesDelivery(input), JSON.stringify(input)).to.equal(false);
  });
});
