import { expect } from 'chai';
import { channelStatusFromAdapters, type StatusAdapter } from '../src/channel-status';

describe('channel status by the order channel kind', () => {
  it('asks the adapter of the order kind with the provider order id; refuses kinds nobody serves', async () => {
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
    expect(await source.status({ channel_id: 1, channel_kind: 'thorchain', provider_order_id: 'p1', deposit_tx_hash: '0xd1' }, signal)).to.deep.equal({ outcome: 'Completed', txHash: 'h' });
    expect(await source.status({ channel_id: 2, channel_kind: 'changenow', provider_order_id: 'p2', deposit_tx_hash: null }, signal)).to.deep.equal({ outcome: 'pending', txHash: 'h' });
    expect(asked, 'with the deposit hash for providers that follow swaps by it').to.deep.equal(['thorchain:p1:0xd1', 'changenow:p2:-']);
    let err: unknown;
    await source.status({ channel_id: 3, channel_kind: 'chainflip', provider_order_id: 'p3', deposit_tx_hash: null }, signal).catch((e) => (err = e));
    expect((err as Error).message).to.equal('no channel adapter of kind chainflip is configured');
  });
});
