import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { DECISIONS_FILE, INDEX_END, INDEX_START, decisionEntries, renderIndex, repeatedNumbers, topicOf, withIndex } from '../../scripts/decisions-index';

const doc = (body: string) => `# Decisions\n\nintro\n\n${body}`;
const entry = (n: number, title: string) => `<a id="d${n}"></a>\n#### D${n}. ${title}\n\n- **Context**: c\n`;

describe('docs/decisions.md: the index by topic (scripts/decisions-index.ts)', () => {
  it('the index at the top of docs/decisions.md lists every entry (npx tsx scripts/decisions-index.ts rewrites it)', () => {
    const text = readFileSync(DECISIONS_FILE, 'utf8');
    expect(text === withIndex(text), 'the index by topic of docs/decisions.md is stale: run npx tsx scripts/decisions-index.ts').to.equal(true);
  });

  it('every entry of docs/decisions.md has its anchor, the one code and documents cite (#dN)', () => {
    const text = readFileSync(DECISIONS_FILE, 'utf8');
    const entries = decisionEntries(text);
    expect(entries.length).to.be.greaterThan(100);
    const missing = entries.filter((e) => !text.includes(`<a id="d${e.number}"></a>\n#### D${e.number}. `)).map((e) => `D${e.number}`);
    expect(missing, 'entries without <a id="dN"></a> on the line before their heading').to.deep.equal([]);
  });

  it("a topic is the section's name before its colon, without \"service\"", () => {
    expect(topicOf('Token price service')).to.equal('Token price');
    expect(topicOf('Address monitoring: storage and reorgs')).to.equal('Address monitoring');
    expect(topicOf('Aggregator integrator API: orders, commission, refunds')).to.equal('Aggregator integrator API');
    expect(topicOf('Pipeline')).to.equal('Pipeline');
  });

  it('groups the entries of one topic from both parts, in number order, topics in the order they first appear', () => {
    const text = doc(
      `## Part one\n\n### Pipeline\n\n${entry(3, 'Batches')}\n### Token price service\n\n${entry(9, 'Nine')}\n${entry(2, 'Two')}\n` +
        `## Part two\n\n### Token price service\n\n${entry(5, 'Five')}\n### Pipeline: topics\n\n${entry(1, 'One')}`,
    );
    const index = renderIndex(decisionEntries(text)).split('\n');
    expect(index.slice(2, -2)).to.deep.equal([
      '- **Pipeline**',
      '  - [D1](#d1) One',
      '  - [D3](#d3) Batches',
      '- **Token price**',
      '  - [D2](#d2) Two',
      '  - [D5](#d5) Five',
      '  - [D9](#d9) Nine',
    ]);
  });

  it('is put before the first part once, then rewritten in place: a new entry is in it after one more run', () => {
    const first = withIndex(doc(`## Part one\n\n### Pipeline\n\n${entry(1, 'One')}`));
    expect(first.indexOf('## Index by topic')).to.be.lessThan(first.indexOf('## Part one'));
    expect(withIndex(first)).to.equal(first);
    const grown = withIndex(`${first}\n${entry(2, 'Two')}`);
    expect(grown.split(INDEX_START).length).to.equal(2);
    expect(grown.split(INDEX_END).length).to.equal(2);
    expect(grown).to.include('  - [D1](#d1) One\n  - [D2](#d2) Two\n');
  });

  it('finds a number that heads two entries, and lists it once', () => {
    const entries = decisionEntries(doc(`### Pipeline\n\n${entry(4, 'Four')}\n${entry(5, 'Five')}\n${entry(4, 'Four again')}`));
    expect(repeatedNumbers(entries)).to.deep.equal([4]);
    expect(renderIndex(entries).split('\n').filter((l) => l.includes('(#d4)'))).to.deep.equal(['  - [D4](#d4) Four']);
  });

  it('no number of docs/decisions.md heads two entries', () => {
    expect(repeatedNumbers(decisionEntries(readFileSync(DECISIONS_FILE, 'utf8'))).map((n) => `D${n}`)).to.deep.equal([]);
  });
});
