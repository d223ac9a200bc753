import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { APP_NODE_OPTIONS, APP_PORTS, appNodeOptions } from '@chainpipe/runtime';

describe('app node options', () => {
  it('names apps of the port table only, and node starts with each app’s options', () => {
    for (const [app, options] of Object.entries(APP_NODE_OPTIONS)) {
      expect(Object.keys(APP_PORTS), app).to.include(app);
      const run = spawnSync(process.execPath, [...options!, '-e', '0'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
      expect(run.status, `${app}: ${run.stderr}`).to.equal(0);
    }
  });

  it('gives an app its options and any other name none', () => {
    expect(appNodeOptions('kline-aggregator')).to.deep.equal(APP_NODE_OPTIONS['kline-aggregator']);
    expect(appNodeOptions('tx-gateway')).to.deep.equal([]);
    expect(appNodeOptions('toString')).to.deep.equal([]);
  });
});
