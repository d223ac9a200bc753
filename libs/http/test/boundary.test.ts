import { expect } from 'chai';
import { NUL_KEYWORD, nulErrors, onlyUnmatchableLookups, type LookupParams } from '@chainpipe/http';

describe('request boundary', () => {
  it('finds every NUL, in values and keys at any depth, naming where', () => {
    const errors = nulErrors({ a: 'x\u0000', b: ['ok', { 'k\u0000': 1, 'c/d': '\u0000' }], n: 5, ok: 'fine' });
    expect(errors.map((e) => [e.instancePath, e.keyword, e.message])).to.deep.equal([
      ['/a', NUL_KEYWORD, 'must not contain NUL characters'],
      ['/b/1/k\u0000', NUL_KEYWORD, 'must not contain NUL characters'],
      ['/b/1/c~1d', NUL_KEYWORD, 'must not contain NUL characters'],
    ]);
    expect(nulErrors({ a: 'plain', b: [1, null, true], c: '\u202Ertl' })).to.deep.equal([]);
    expect(nulErrors('\u0000').map((e) => e.instancePath)).to.deep.equal(['']);
  });

  it('a lookup parameter that no row can hold is a not-found; anything else malformed stays a 400', () => {
    const lookup: LookupParams = { params: ['id'], notFound: () => undefined };
    const err = (instancePath: string, keyword: string) => ({ instancePath, keyword, schemaPath: '#', params: {} });
    expect(onlyUnmatchableLookups([err('/id', NUL_KEYWORD)], lookup)).to.equal(true);
    expect(onlyUnmatchableLookups([err('/id', 'decimalMaximum')], lookup)).to.equal(true);
    expect(onlyUnmatchableLookups([err('/id', 'pattern')], lookup), 'malformed').to.equal(false);
    expect(onlyUnmatchableLookups([err('/id', NUL_KEYWORD), err('/page', 'pattern')], lookup), 'another parameter is malformed').to.equal(false);
    expect(onlyUnmatchableLookups([err('/name', NUL_KEYWORD)], lookup), 'not a lookup parameter').to.equal(false);
    expect(onlyUnmatchableLookups([err('/id', NUL_KEYWORD)], undefined)).to.equal(false);
    expect(onlyUnmatchableLookups([], lookup)).to.equal(false);
  });
});
