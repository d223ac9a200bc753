import { expect } from 'chai';
import knex from 'knex';
import { dbComponent } from '@chainpipe/db';
import { ManualClock, waitFor } from '@chainpipe/testing';

describe('dbComponent health checks on a manual clock', () => {
  it('checks every checkMs while healthy, turns degraded when Postgres cannot be reached, then rechecks every recheckMs', async () => {
    const clock = new ManualClock();
    // Nothing listens on port 1: every check is refused at once (knex's own report of it is silenced).
    const quiet = { warn: () => undefined, error: () => undefined, debug: () => undefined, deprecate: () => undefined };
    const db = knex({ client: 'pg', connection: 'postgres://postgres@127.0.0.1:1/none', pool: { min: 0, max: 1 }, log: quiet });
    const component = dbComponent(db, { checkMs: 5_000, recheckMs: 1_000, clock });
    try {
      await clock.advance(4_999);
      expect(component.health()).to.deep.equal({ state: 'ok' });
      expect(clock.nextDueIn()).to.equal(1);
      await clock.advance(1);
      const h = await waitFor(() => component.health().state === 'degraded' && component.health(), { what: 'degraded after a refused check', intervalMs: 5 });
      expect(h.detail).to.match(/^postgres unreachable: .*ECONNREFUSED/);
      await waitFor(() => clock.pendingTimers === 1, { what: 'the next check scheduled', intervalMs: 5 });
      expect(clock.nextDueIn(), 'unhealthy: the next check a recheck period later').to.equal(1_000);
    } finally {
      await component.stop();
    }
    expect(clock.pendingTimers, 'no check after stop').to.equal(0);
  });
});
