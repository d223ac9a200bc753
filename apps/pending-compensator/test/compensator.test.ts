import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { NetworkInfo } from '@chainpipe/chains';
import { OriginError } from '@chainpipe/upstreams';
import { createLogger } from '@chainpipe/runtime';
import { emptyTx, type NormalizedTx, type OriginLookup } from '@chainpipe/tx-parsers';
import { createCompensator } from '../src/compensator';

const logger = createLogger({ name: 'test', level: 'silent' });

function tx(hash: string, status: string): NormalizedTx {
  return { ...emptyTx({ chainType: 'ethereum', chainId: 1, nativeSymbol: 'ETH', nativeDecimals: 18 }, hash), tx_status: status } as NormalizedTx;
}

describe('pending-compensator pass', () => {
  it('settles what the node calls final, per network in one step, and leaves the rest pending and marked checked', async () => {
    const answers: Record<string, OriginLookup | Error> = {
      '0xa1': { found: true, tx: tx('0xa1', 'success') },
      '0xa2': { found: true, tx: tx('0xa2', 'failed') },
      '0xb1': { found: true, tx: tx('0xb1', 'pending') },
      '0xc1': { found: false },
      '0xd1': new OriginError('connect ECONNREFUSED', 'unreachable'),
    };
    const settled: { network: string; hashes: string[] }[] = [];
    let checked: string[] = [];
    const registry = new Registry();
    const pass = createCompensator({
      pending: async () => [
        { id: '1', network: 'ethereum-mainnet', tx_hash: '0xa1' },
        { id: '2', network: 'ethereum-mainnet', tx_hash: '0xb1' },
        { id: '3', network: 'ethereum-mainnet', tx_hash: '0xc1' },
        { id: '4', network: 'ethereum-mainnet', tx_hash: '0xd1' },
        { id: '5', network: 'ethereum-mainnet', tx_hash: '0xa2' },
        { id: '6', network: 'no-such-network', tx_hash: '0xe1' },
      ],
      lookup: async (_network: NetworkInfo, hash: string) => {
        const a = answers[hash];
        if (a instanceof Error) throw a;
        return a;
      },
      handOver: async (network, txs) => {
        settled.push({ network: network.network, hashes: txs.map((t) => t.tx_hash) });
      },
      markChecked: async (ids) => void (checked = ids),
      concurrency: 2,
      logger,
      registry,
    });
    const counts = await pass();
    expect(counts).to.deep.equal({ settled: 2, still_pending: 1, not_found: 1, origin_failed: 1, unknown_network: 1 });
    expect(settled).to.deep.equal([{ network: 'ethereum-mainnet', hashes: ['0xa1', '0xa2'] }]);
    expect(checked.sort()).to.deep.equal(['2', '3', '4', '6']);
    expect(await registry.getSingleMetricAsString('chainpipe_pending_checks_total')).to.match(/outcome="settled"[^\n]*\} 2/);
  });

  it('a failed hand-over fails the pass (nothing marked checked), so the next pass tries again', async () => {
    let marked = false;
    const pass = createCompensator({
      pending: async () => [{ id: '1', network: 'ethereum-mainnet', tx_hash: '0xa1' }],
      lookup: async () => ({ found: true, tx: tx('0xa1', 'success') }),
      handOver: async () => {
        throw new Error('broker unreachable');
      },
      markChecked: async () => void (marked = true),
      concurrency: 1,
      logger,
      registry: new Registry(),
    });
    const err = await pass().catch((e: Error) => e);
    expect((err as Error).message).to.equal('broker unreachable');
    expect(marked).to.equal(false);
  });
});
