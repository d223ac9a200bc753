import { expect } from 'chai';
import { channelStatusFromAdapters, paymentToChannel, type StatusAdapter } from '../src/channel-status';

describe('channel status by the order channel kind', () => {
  it('asks the adapter of the order kind with the provider order id and the payment to the channel; refuses kinds nobody serves', async () => {
    const asked: string[] = [];
    const adapter = (kind: string): StatusAdapter => ({
      kind,
      status: async (id, _signal, ctx) => {
        asked.push(`${kind}:${id}:${ctx?.depositTxHash ?? '-'}`);
        return { outcome: kind === 'thorchain' ? 'Completed' : 'pending', txHash: 'h' };
      },
    });
    const source = channelStatusFromAdapters([adapter('thorchain'), adapter('changenow')]);
    const signal = new AbortController().signal;
    const none = { deposit_index: null, deposit_tx_hash: null, forward_tx_hash: null };
    expect(await source.status({ channel_id: 1, channel_kind: 'thorchain', provider_order_id: 'p1', ...none, deposit_index: 5, deposit_tx_hash: '0xd1', forward_tx_hash: '0xf1' }, signal)).to.deep.equal({ outcome: 'Completed', txHash: 'h' });
    expect(await source.status({ channel_id: 2, channel_kind: 'changenow', provider_order_id: 'p2', ...none }, signal)).to.deep.equal({ outcome: 'pending', txHash: 'h' });
    expect(asked, 'with the forward hash for providers that follow swaps by it').to.deep.equal(['thorchain:p1:0xf1', 'changenow:p2:-']);
    let err: unknown;
    await source.status({ channel_id: 3, channel_kind: 'chainflip', provider_order_id: 'p3', ...none }, signal).catch((e) => (err = e));
    expect((err as Error).message).to.equal('no channel adapter of kind chainflip is configured');
  });

  it('the payment to the channel is the forward of an order paid to its own address (none before it), the deposit of an order paid to the channel', () => {
    expect(paymentToChannel({ deposit_index: 7, deposit_tx_hash: '0xd', forward_tx_hash: '0xf' })).to.equal('0xf');
    expect(paymentToChannel({ deposit_index: 7, deposit_tx_hash: '0xd', forward_tx_hash: null }), 'paid, not yet forwarded: nothing to follow').to.equal(null);
    expect(paymentToChannel({ deposit_index: null, deposit_tx_hash: '0xd', forward_tx_hash: null })).to.equal('0xd');
  });
});
