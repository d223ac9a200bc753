import net from 'node:net';
import { expect } from 'chai';
import { freePort, freePortRange } from '../src/processes';

/** Where Linux's ephemeral range (outgoing connections' local ports) starts by default. */
const EPHEMERAL_FROM = 32_768;
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

describe('test ports', () => {
  it('hands out ports below the ephemeral range, each bindable, none twice to callers at once', async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).to.equal(ports.length);
    for (const p of ports) {
      expect(p).to.be.within(20_000, EPHEMERAL_FROM - 1);
      expect(await bindable(p)).to.equal(true);
    }
  });

  it('a range of consecutive ports, taken at the same time as single ones: no port given twice', async () => {
    const [base, ...singles] = await Promise.all([freePortRange(6), ...Array.from({ length: 20 }, () => freePort())]);
    const range = Array.from({ length: 6 }, (_, i) => base + i);
    expect(range.filter((p) => singles.includes(p))).to.deep.equal([]);
    for (const p of range) {
      expect(p).to.be.within(20_000, EPHEMERAL_FROM - 1);
      expect(await bindable(p)).to.equal(true);
    }
  });
});
