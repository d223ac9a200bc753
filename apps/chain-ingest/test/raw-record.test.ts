import { expect } from 'chai';
import { loadContracts } from '@chainpipe/contracts';
import { networkByName } from '@chainpipe/chains';
import { carriedHeaders, rawRecordHeaders, resolveNetwork } from '../src/raw-record';

describe('raw record headers', () => {
  it('takes the network from cl-stream-network before stream-network', () => {
    expect(resolveNetwork({ 'cl-stream-network': 'bsc-mainnet', 'stream-network': 'ethereum-mainnet' })).to.have.nested.property('network.network', 'bsc-mainnet');
    expect(resolveNetwork({ 'stream-network': 'Ethereum-Mainnet' })).to.have.nested.property('network.chainId', 1);
    expect(resolveNetwork({})).to.deep.equal({ error: 'missing network header (cl-stream-network or stream-network)' });
    expect(resolveNetwork({ 'cl-stream-network': 'x'.repeat(500) })).to.have.property('error').that.has.length.below(100);
  });

  it('carries streamer metadata headers and nothing else', () => {
    const carried = carriedHeaders({ 'batch-start-range': '1', 'stream-id': 'u', 'x-qn-signature': 's', 'content-secret-x': 'no', 'x-api-key': 'no', cookie: 'no' });
    expect(carried).to.deep.equal({ 'batch-start-range': '1', 'stream-id': 'u', 'x-qn-signature': 's' });
  });

  it('builds headers that satisfy the chain.raw.v1 schema', () => {
    const headers = rawRecordHeaders({
      network: networkByName('tron-mainnet')!,
      receivedAtMs: 1_763_000_000_000,
      contentEncoding: 'GZIP',
      contentType: 'application/json',
      route: 'stream',
      requestId: 'r-1',
      headers: { 'batch-end-range': '9' },
    });
    expect(headers).to.deep.equal({ 'batch-end-range': '9', network: 'tron-mainnet', received_at: '1763000000000', content_encoding: 'gzip', content_type: 'application/json', ingest_route: 'stream', request_id: 'r-1' });
    expect(loadContracts().validate('kafka/chain.raw.v1.headers', headers)).to.deep.equal({ ok: true });
    expect(loadContracts().validate('kafka/chain.raw.v1.headers', { ...headers, content_encoding: 'zstd' }).ok).to.equal(false);
  });
});
