import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { APP_PORTS, appPorts, int, startService } from '@chainpipe/runtime';

describe('startService', () => {
  it('starts entry points after wiring, in order, and stops them before the connections they use', async () => {
    const events: string[] = [];
    const exits: number[] = [];
    const svc = await startService(
      'kit-test',
      { EXTRA: int({ default: 7 }) },
      async (s) => {
        expect(s.config.EXTRA).to.equal(7);
        s.use({ name: 'pool', stop: async () => void events.push('stop pool') });
        s.serve({ name: 'consumer', start: async () => void events.push('start consumer'), stop: async () => void events.push('stop consumer') });
        s.use({ name: 'producer', stop: async () => void events.push('stop producer') });
        s.serve({ name: 'http', start: async () => (events.push('start http'), { port: 1 }), stop: async () => void events.push('stop http') });
        events.push('wired');
      },
      { env: { LOG_LEVEL: 'silent', OPS_PORT: '0' }, exit: (c) => exits.push(c) },
    );
    expect(svc.lifecycle.readiness().ready).to.equal(true);
    await svc.lifecycle.shutdown('test');
    expect(events).to.deep.equal(['wired', 'start consumer', 'start http', 'stop http', 'stop consumer', 'stop producer', 'stop pool']);
    expect(exits).to.deep.equal([0]);
  });

  it('needs OPS_PORT for an app outside the port table and defaults it for one inside', async () => {
    let error: unknown;
    await startService('kit-test', {}, () => undefined, { env: { LOG_LEVEL: 'silent' }, exit: () => undefined }).catch((e) => (error = e));
    expect(String(error)).to.match(/OPS_PORT/);
    expect(appPorts('chain-parser')).to.deep.equal({ ops: 9103 });
    expect(appPorts('no-such-app')).to.equal(undefined);
  });
});

describe('port table', () => {
  it('gives every app distinct ports', () => {
    const all = Object.values(APP_PORTS).flatMap((p) => ('public' in p ? [p.public, p.ops] : [p.ops]));
    expect(new Set(all).size).to.equal(all.length);
  });

  it('is the table the README shows', () => {
    const readme = readFileSync(path.resolve(__dirname, '../../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Ports'));
    for (const [name, ports] of Object.entries(APP_PORTS)) {
      const pub = 'public' in ports ? String(ports.public) : '—';
      expect(section, name).to.contain(`| ${name} | ${pub} | ${ports.ops} |`);
    }
    const rows = section.slice(0, section.indexOf('\n## ')).split('\n').filter((l) => /^\| [a-z-]+ \| /.test(l) && !l.startsWith('| App'));
    expect(rows.map((r) => r.split('|')[1].trim())).to.deep.equal(Object.keys(APP_PORTS));
  });
});
