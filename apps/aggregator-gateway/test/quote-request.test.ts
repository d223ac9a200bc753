import { expect } from 'chai';
import { parseQuoteRequest, sseEvent } from '../src/quotes/request';

describe('quote stream parameters', () => {
  const ok = { src_token_id: '101', dst_token_id: '1001', amount_in: '100000', slippage: '0.01' };

  it('reads the GET query strings and the POST body alike', () => {
    const want = { srcTokenId: 101, dstTokenId: 1001, amountIn: 100_000n, slippage: 0.01, promoCode: null, channelId: null };
    expect(parseQuoteRequest(ok)).to.deep.equal({ ok: true, value: want });
    expect(parseQuoteRequest({ src_token_id: 101, dst_token_id: 1001, amount_in: '100000', slippage: 0.01 })).to.deep.equal({ ok: true, value: want });
    expect(parseQuoteRequest({ ...ok, channel_id: '2', promo_code: ' SPRING ' })).to.deep.include({ ok: true });
  });

  it('the spec messages for missing fields, then the range and form checks', () => {
    expect(parseQuoteRequest({ ...ok, src_token_id: undefined })).to.deep.equal({ ok: false, msg: 'src_token_id/dst_token_id required' });
    expect(parseQuoteRequest({ ...ok, dst_token_id: '' })).to.deep.equal({ ok: false, msg: 'src_token_id/dst_token_id required' });
    expect(parseQuoteRequest({ ...ok, amount_in: undefined })).to.deep.equal({ ok: false, msg: 'amount_in required' });
    expect(parseQuoteRequest({ ...ok, slippage: undefined })).to.deep.equal({ ok: false, msg: 'slippage required' });
    for (const slippage of ['0', '1', '-0.1', 'abc', '1e5']) expect(parseQuoteRequest({ ...ok, slippage }), slippage).to.deep.equal({ ok: false, msg: 'slippage out of range' });
    expect(parseQuoteRequest({ ...ok, amount_in: '1.5' }).ok).to.equal(false);
    expect(parseQuoteRequest({ ...ok, amount_in: '0' }).ok).to.equal(false);
    expect(parseQuoteRequest({ ...ok, src_token_id: '1x' }).ok).to.equal(false);
    expect(parseQuoteRequest({ ...ok, channel_id: 'x' })).to.deep.equal({ ok: false, msg: 'channel not found' });
  });

  it('an SSE event is the event line, one data line of JSON and a blank line', () => {
    expect(sseEvent('done', {})).to.equal('event: done\ndata: {}\n\n');
    expect(sseEvent('error', { channel_id: 1, msg: 'line\nbreak' })).to.equal('event: error\ndata: {"channel_id":1,"msg":"line\\nbreak"}\n\n');
  });
});
