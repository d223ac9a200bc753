import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ERROR_CODES } from '../src/error-codes';

describe('error codes', () => {
  it('the table of docs/architecture.md lists every code of ERROR_CODES with its meaning, and nothing else', () => {
    const doc = readFileSync(path.join(__dirname, '../../../docs/architecture.md'), 'utf8');
    const start = doc.indexOf('| Code | Meaning |');
    expect(start, 'error code table of docs/architecture.md').to.be.greaterThan(-1);
    const lines = doc.slice(start).split('\n').slice(2);
    const rows = lines.slice(0, lines.findIndex((l) => !l.startsWith('|')));
    const listed = Object.fromEntries(rows.map((l) => /^\| `([A-Z0-9_]+)` \| (.*) \|$/.exec(l)?.slice(1, 3) ?? [l, 'not a code row']));
    expect(listed).to.deep.equal({ ...ERROR_CODES });
  });

  it('codes are SCREAMING_SNAKE_CASE, as a dead letter header carries them', () => {
    for (const code of Object.keys(ERROR_CODES)) expect(code).to.match(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });
});
