import { expect } from 'chai';
import { chunk, decodeHeaders, nextOffset } from '@chainpipe/kafka';

describe('offset helpers', () => {
  it('commits the offset after the last processed one, beyond 2^53', () => {
    expect(nextOffset('0')).to.equal('1');
    expect(nextOffset('9007199254740993')).to.equal('9007199254740994');
  });

  it('chunks in order and refuses a size below 1', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).to.deep.equal([[1, 2], [3, 4], [5]]);
    expect(chunk([], 3)).to.deep.equal([]);
    expect(() => chunk([1], 0)).to.throw(RangeError);
  });

  it('decodes header buffers and arrays to strings', () => {
    expect(decodeHeaders({ a: Buffer.from('x'), b: 'y', c: [Buffer.from('1'), Buffer.from('2')], d: undefined })).to.deep.equal({ a: 'x', b: 'y', c: '2' });
  });
});
