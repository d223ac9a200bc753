import { expect } from 'chai';
import { channelStatusFromAdapters, type StatusAdapter } from '../src/channel-status';

describe('channel status by the order channel kind', () => {
  it('asks the adapter of the order kind with the provider order id; refuses kinds nobody serves', async () => {
    const asked: string[] = [];
    const adapter = (kind: string): StatusAdapter => ({
      kind,
      status: async (id) => {
        asked.push(`${kind}:${id}`);
        return { outcome: kind === 'thorchain' ? 'Completed' : 'pending', txHash: 'h' };
      },
    });
    const source = channelStatusFromAdapters([adapter('thorchain'), adapter('changenow')]);
    const signal = new AbortController().signal;
    expect(await source.status({ channel_id: 1, channel_kind: 'thorchain', provider_order_id: 'p1' }, signal)).to.deep.equal({ outcome: 'Completed', txHash: 'h' });
    expect(await source.status({ channel_id: 2, channel_kind: 'changenow', provider_order_id: 'p2' }, signal)).to.deep.equal({ outcome: 'pending', txHash: 'h' });
    expect(asked).to.deep.equal(['thorchain:p1', 'changenow:p2']);
    let err: unknown;
    await source.status({ channel_id: 3, channel_kind: 'chainflip', provider_order_id: 'p3' }, signal).catch((e) => (err = e));
    expect((err as Error).message).to.equal('no channel adapter of kind chainflip is configured');
  });
});
