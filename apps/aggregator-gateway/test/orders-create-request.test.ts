import { expect } from 'chai';
import { checkRules, newOrderNo, precheck, type CreateBody } from '../src/orders/create-request';

const body = (over: Partial<CreateBody> = {}): CreateBody => ({
  src_token_id: 101,
  dst_token_id: 1001,
  amount_in: '1000000000000000000',
  dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
  chosen_channel_id: 2,
  slippage: 0.01,
  main_channel_estimated_out_amount: '5000000',
  min_acceptable_out_amount: '4950000',
  channels: [{ channel_id: 1, estimated_out_str: '4900000' }, { channel_id: 2, estimated_out_str: '5000000' }],
  ...over,
});

describe('integrator order creation: checks of the body alone', () => {
  it('required fields: the token ids first, then each field by name', () => {
    expect(precheck(body())).to.deep.equal({ ok: true });
    const without = (f: string) => {
      const b: Record<string, unknown> = { ...body() };
      delete b[f];
      return precheck(b);
    };
    expect(without('src_token_id')).to.deep.equal({ ok: false, msg: 'src_token_id/dst_token_id required' });
    expect(without('dst_token_id')).to.deep.equal({ ok: false, msg: 'src_token_id/dst_token_id required' });
    for (const f of ['amount_in', 'dst_address', 'chosen_channel_id', 'slippage', 'main_channel_estimated_out_amount', 'min_acceptable_out_amount', 'channels']) {
      expect(without(f), f).to.deep.equal({ ok: false, msg: `${f} required` });
    }
    expect(precheck(body({ dst_address: '' }))).to.deep.equal({ ok: false, msg: 'dst_address required' });
    for (const notObject of [null, [], 'x', 3]) expect(precheck(notObject)).to.deep.equal({ ok: false, msg: 'invalid request body' });
  });

  it('split and risk payloads are refused', () => {
    const msg = 'split orders are not supported for integrator orders';
    expect(precheck({ ...body(), split_count: 2 })).to.deep.equal({ ok: false, msg });
    expect(precheck({ ...body(), is_risk: true })).to.deep.equal({ ok: false, msg });
    expect(precheck({ ...body(), split_count: 1, is_risk: false })).to.deep.equal({ ok: true });
  });

  it('slippage strictly inside (0, 1)', () => {
    for (const slippage of [0, 1, -0.1, 1.5]) expect(checkRules(body({ slippage })), String(slippage)).to.deep.equal({ ok: false, msg: 'slippage out of range' });
    expect(checkRules(body({ slippage: 0.5, min_acceptable_out_amount: '2500000' }))).to.deep.equal({ ok: true });
  });

  it('the chosen channel must be one of the channels sent', () => {
    expect(checkRules(body({ chosen_channel_id: 3 }))).to.deep.equal({ ok: false, msg: 'chosen_channel_id not in channels' });
  });

  it('min_acceptable_out_amount may not be below estimate × (1 − slippage), floored, nor zero', () => {
    // 5000000 × 0.99 = 4950000
    expect(checkRules(body({ min_acceptable_out_amount: '4949999' }))).to.deep.equal({ ok: false, msg: 'min_acceptable_out_amount too low' });
    expect(checkRules(body({ min_acceptable_out_amount: '4950000' }))).to.deep.equal({ ok: true });
    expect(checkRules(body({ main_channel_estimated_out_amount: '0', min_acceptable_out_amount: '0' }))).to.deep.equal({ ok: false, msg: 'min_acceptable_out_amount too low' });
  });

  it('order numbers are time-ordered and unique', () => {
    const a = newOrderNo(new Date('2026-11-24T20:01:02.345Z'));
    expect(a).to.match(/^AO20261124200102[0-9a-f]{10}$/);
    expect(newOrderNo(new Date('2026-11-24T20:01:02Z'))).to.not.equal(a);
  });
});
