import { readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { CHAINS, canonicalAddress, normalizeAddress, tronBase58ToHex, type ChainFamily } from '@chainpipe/chains';
import { CHAIN_FIXTURES_DIR, readFixtureBytes } from '@chainpipe/testing';

/**
 * `canonicalAddress` (what the management API stores for a monitored address) and
 * `normalizeAddress` (what the parsers index a transaction's addresses under) must give the same
 * string for every address the API accepts, or a monitored address never matches its transfers.
 * The addresses are every address-shaped string of the real chain fixtures of each family, in
 * each form a client may send.
 */

/** Address-shaped strings of one fixture directory, with the pattern of the family's encodings. */
function fixtureStrings(dir: string, pattern: RegExp): string[] {
  const found = new Set<string>();
  for (const file of readdirSync(path.join(CHAIN_FIXTURES_DIR, dir))) {
    const text = readFixtureBytes(path.join(dir, file)).toString('utf8');
    for (const m of text.matchAll(pattern)) found.add(m[1]);
  }
  return [...found];
}

/** The forms a client may send of a fixture address: as stored in the chain data, padded, re-cased. */
const FORMS: Record<ChainFamily, () => string[]> = {
  evm: () =>
    fixtureStrings('evm', /"(0x[0-9a-fA-F]{40})"/g).flatMap((a) => [a, a.toLowerCase(), '0x' + a.slice(2).toUpperCase(), ` ${a}\n`]),
  tvm: () => {
    const base58 = fixtureStrings('tron', /"(T[1-9A-HJ-NP-Za-km-z]{33})"/g);
    const hex = fixtureStrings('tron', /"(41[0-9a-fA-F]{40})"/g);
    const fromBase58 = base58.map((a) => tronBase58ToHex(a)).filter((h): h is string => h !== undefined);
    return [...base58, ...hex, ...fromBase58].flatMap((a) =>
      a.startsWith('T') ? [a, ` ${a} `] : [a, a.toUpperCase(), '0x' + a.slice(2), '0x' + a.slice(2).toUpperCase()],
    );
  },
  svm: () => fixtureStrings('solana', /"([1-9A-HJ-NP-Za-km-z]{32,44})"/g).flatMap((a) => [a, `\t${a}`]),
  utxo: () =>
    fixtureStrings('bitcoin', /"((?:bc1[02-9ac-hj-np-z]{6,87})|(?:[13][1-9A-HJ-NP-Za-km-z]{24,33}))"/g).flatMap((a) =>
      a.startsWith('bc1') ? [a, a.toUpperCase(), ` ${a}`] : [a, ` ${a}`],
    ),
};

describe('canonicalAddress and normalizeAddress agree', () => {
  const families = [...new Set(Object.values(CHAINS).map((c) => c.family))];

  it('covers every chain family of the chain table', () => {
    expect(Object.keys(FORMS).sort()).to.deep.equal([...families].sort());
  });

  for (const family of families) {
    it(`${family}: every accepted fixture address gives the same stored form`, () => {
      const forms = FORMS[family]();
      const accepted = forms.filter((a) => canonicalAddress(family, a).ok);
      // Enough real addresses to mean something, in more than one form each.
      expect(accepted.length, `accepted ${family} addresses of ${forms.length}`).to.be.greaterThan(5);
      for (const a of accepted) {
        const check = canonicalAddress(family, a);
        if (!check.ok) throw new Error('unreachable');
        expect(normalizeAddress(family, a), JSON.stringify(a)).to.equal(check.address);
        // The stored form is a fixed point of both.
        expect(normalizeAddress(family, check.address)).to.equal(check.address);
        expect(canonicalAddress(family, check.address)).to.deep.equal({ ok: true, address: check.address });
      }
    });
  }
});
