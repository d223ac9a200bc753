import { expect } from 'chai';
import { connectLookup, type Lookup } from '../src/sender';

/** What node's connect gets back from the lookup: `(err, address, family)` or `(err, list)`. */
function ask(resolve: Lookup, allowPrivate: boolean, options: { all?: boolean; family?: number | string }) {
  const refusals: string[] = [];
  const lookup = connectLookup(resolve, allowPrivate, (r) => refusals.push(r));
  return new Promise<{ err: Error | null; answer: unknown; family?: unknown; refusals: string[] }>((done) =>
    lookup('hooks.example.com', options, (err, answer, family) => done({ err: err as Error | null, answer, family, refusals })),
  );
}

/** A name answering public and private addresses of both families, as a resolver may. */
const mixed: Lookup = async () => [
  { address: '10.0.0.7', family: 4 },
  { address: '93.184.215.14', family: 4 },
  { address: 'fd00::7', family: 6 },
  { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  { address: '127.0.0.1', family: 4 },
  { address: '::ffff:192.168.1.1', family: 6 },
];

describe('webhook sender: the connect-time lookup', () => {
  it('asked for every address (autoSelectFamily): a list of the public ones of both families, the private ones left out', async () => {
    const r = await ask(mixed, false, { all: true });
    expect(r.err).to.equal(null);
    expect(r.answer).to.deep.equal([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
  });

  it('asked for one address of a family: the first public one of it (4, 6, IPv4, IPv6), or of any when no family is named', async () => {
    for (const [family, address, fam] of [
      [4, '93.184.215.14', 4],
      ['IPv4', '93.184.215.14', 4],
      [6, '2606:2800:21f:cb07:6820:80da:af6b:8b2c', 6],
      ['IPv6', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', 6],
      [0, '93.184.215.14', 4],
      [undefined, '93.184.215.14', 4],
    ] as const) {
      const r = await ask(mixed, false, { family });
      expect([r.err, r.answer, r.family], String(family)).to.deep.equal([null, address, fam]);
    }
  });

  it('a name resolving only to private addresses is refused with a reason naming it, whichever way it is asked', async () => {
    const privateOnly: Lookup = async () => [
      { address: '10.1.2.3', family: 4 },
      { address: '::1', family: 6 },
      { address: '169.254.169.254', family: 4 },
    ];
    for (const options of [{ all: true }, { family: 4 }, {}]) {
      const r = await ask(privateOnly, false, options);
      expect(r.err?.message).to.equal('hooks.example.com resolves to no public address');
      expect((r.err as NodeJS.ErrnoException).code).to.equal('ENOTFOUND');
      expect(r.refusals).to.deep.equal(['hooks.example.com resolves to no public address']);
    }
    // Asked for IPv6 of a name with public IPv4 only: none of that family.
    const v4only: Lookup = async () => [{ address: '93.184.215.14', family: 4 }];
    expect((await ask(v4only, false, { family: 6 })).err?.message).to.equal('hooks.example.com resolves to no address');
  });

  it('with private targets allowed every address is handed back, in the resolver\'s order', async () => {
    const r = await ask(mixed, true, { all: true });
    expect((r.answer as Array<{ address: string }>).map((a) => a.address)).to.deep.equal(['10.0.0.7', '93.184.215.14', 'fd00::7', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '127.0.0.1', '::ffff:192.168.1.1']);
  });

  it('a resolver failure is passed on as the connect error', async () => {
    const failing: Lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.com'), { code: 'ENOTFOUND' });
    };
    for (const options of [{ all: true }, {}]) {
      const r = await ask(failing, false, options);
      expect(r.err?.message).to.equal('getaddrinfo ENOTFOUND hooks.example.com');
      expect(r.refusals).to.deep.equal([]);
    }
  });
});
