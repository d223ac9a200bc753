import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { LOCKFILE, RECORD, installedPackages, pinnedPackages, recordLines, renderRecord, treeAgainstLock } from '../../scripts/dependency-review';

describe('dependency review (deploy/dependency-review.txt against package-lock.json)', () => {
  it('the record lists exactly what the lockfile pins: a dependency change is reviewed and written again (npx tsx scripts/dependency-review.ts --write)', () => {
    const pinned = pinnedPackages(JSON.parse(readFileSync(LOCKFILE, 'utf8')));
    expect(pinned.length).to.be.greaterThan(100);
    const expected = recordLines(renderRecord(pinned));
    const recorded = recordLines(readFileSync(RECORD, 'utf8'));
    const added = expected.filter((l) => !recorded.includes(l));
    const removed = recorded.filter((l) => !expected.includes(l));
    expect({ added, removed }, 'deploy/dependency-review.txt is stale: review the change, then npx tsx scripts/dependency-review.ts --write').to.deep.equal({ added: [], removed: [] });
    expect(recorded).to.deep.equal(expected);
  });

  it('reads the lockfile: nested copies once per version, production over development, workspace links left out', () => {
    const lock = {
      packages: {
        '': { version: '0.1.0' },
        'apps/x': { version: '0.1.0' },
        'node_modules/@chainpipe/x': { link: true, version: '0.1.0' },
        'node_modules/a': { version: '1.0.0', integrity: 'sha512-a' },
        'node_modules/b/node_modules/a': { version: '2.0.0', dev: true, integrity: 'sha512-a2' },
        'libs/y/node_modules/a': { version: '2.0.0', integrity: 'sha512-a2' },
        'node_modules/@esbuild/linux-arm64': { version: '0.25.0', dev: true, optional: true, integrity: 'sha512-e' },
      },
    };
    expect(pinnedPackages(lock)).to.deep.equal([
      { name: '@esbuild/linux-arm64', version: '0.25.0', dev: true, optional: true, integrity: 'sha512-e' },
      { name: 'a', version: '1.0.0', dev: false, optional: false, integrity: 'sha512-a' },
      { name: 'a', version: '2.0.0', dev: false, optional: false, integrity: 'sha512-a2' },
    ]);
  });

  it('an installed tree differing from the lockfile is named: another version, a missing or extraneous package; a platform\'s optional binary may be absent', () => {
    const pinned = pinnedPackages({ packages: { 'node_modules/a': { version: '1.0.0' }, 'node_modules/b': { version: '1.0.0' }, 'node_modules/@esbuild/win32-x64': { version: '0.25.0', optional: true } } });
    const tree = {
      dependencies: {
        '@chainpipe/app': { version: '0.1.0', resolved: 'file:../apps/app', dependencies: { a: { version: '1.0.1', invalid: '"1.0.0" from the root project' } } },
        c: { version: '3.0.0', extraneous: true },
        b: { missing: true },
      },
    };
    const { installed, problems } = installedPackages(tree);
    expect(problems).to.deep.equal(['a@1.0.1: invalid ("1.0.0" from the root project)', 'c@3.0.0: extraneous', 'b: missing']);
    expect(treeAgainstLock(installed, pinned)).to.deep.equal([
      'a@1.0.0: in package-lock.json but not installed',
      'a@1.0.1: installed but not in package-lock.json',
      'b@1.0.0: in package-lock.json but not installed',
      'c@3.0.0: installed but not in package-lock.json',
    ]);
  });
});
