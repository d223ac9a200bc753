import { expect } from 'chai';
import { appPorts, portOffset, publicPort } from '@chainpipe/runtime';

describe('port offset (CHAINPIPE_PORT_OFFSET)', () => {
  it('moves every port of an app by the offset, the table itself unchanged', () => {
    // The README's rows: market-gateway 8080 / 9100, chain-parser ops 9103 only.
    expect(appPorts('market-gateway', {})).to.deep.equal({ public: 8080, ops: 9100 });
    expect(appPorts('market-gateway', { CHAINPIPE_PORT_OFFSET: '1000' })).to.deep.equal({ public: 9080, ops: 10100 });
    expect(appPorts('chain-parser', { CHAINPIPE_PORT_OFFSET: '1000' })).to.deep.equal({ ops: 10103 });
    expect(publicPort('upstream-sim', { CHAINPIPE_PORT_OFFSET: ' 2000 ' })).to.equal(10090);
    expect(appPorts('no-such-app', { CHAINPIPE_PORT_OFFSET: '1000' })).to.equal(undefined);
  });

  it('refuses an offset that is not a whole number from 0 to 20000', () => {
    expect(portOffset({})).to.equal(0);
    expect(portOffset({ CHAINPIPE_PORT_OFFSET: '20000' })).to.equal(20000);
    for (const bad of ['-1', '1.5', 'abc', '', '20001', '1e3']) {
      expect(() => portOffset({ CHAINPIPE_PORT_OFFSET: bad }), bad).to.throw(/CHAINPIPE_PORT_OFFSET must be a whole number/);
    }
  });
});
