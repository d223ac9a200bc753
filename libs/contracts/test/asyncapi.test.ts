import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import { expect } from 'chai';
import { AGGREGATOR_GATEWAY_CHANNELS, MARKET_GATEWAY_CHANNELS, TOPICS, TX_GATEWAY_CHANNELS, asyncApiDocument, loadContracts, topicChannels } from '@chainpipe/contracts';

describe('AsyncAPI document', () => {
  const contracts = loadContracts();

  it('is a valid AsyncAPI 3 document (@asyncapi/parser) with a channel and message per registry topic', async () => {
    const doc = asyncApiDocument(contracts);
    const { document, diagnostics } = await new Parser().parse(structuredClone(doc) as never);
    const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).to.deep.equal([]);
    expect(document).to.not.equal(undefined);
    const addresses = document!.channels().all().map((c) => c.address());
    expect(addresses.sort()).to.deep.equal(Object.values(TOPICS).map((t) => t.name).sort());
    // A json topic's payload is its schema; chain.raw.v1 documents its headers.
    expect(doc.components.messages['chain.tx.v1']).to.deep.include({ payload: { $ref: '#/components/schemas/kafka.chain.tx.v1' } });
    expect(doc.components.messages['chain.raw.v1']).to.deep.include({ headers: { $ref: '#/components/schemas/kafka.chain.raw.v1.headers' } });
  });

  it('documents the WebSockets and the webhook callback with their messages in both directions', async () => {
    const channels = [...topicChannels(), ...TX_GATEWAY_CHANNELS, ...MARKET_GATEWAY_CHANNELS, ...AGGREGATOR_GATEWAY_CHANNELS];
    const doc = asyncApiDocument(contracts, channels);
    const { document, diagnostics } = await new Parser().parse(structuredClone(doc) as never);
    expect(diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => `${d.path.join('.')}: ${d.message}`)).to.deep.equal([]);
    const addresses = document!.channels().all().map((c) => c.address());
    expect(addresses).to.include.members(['/tx/api/v1/transaction/ws', '{webhook_url}', '/kline/api/v1/kline/ws', '/kline/api/v1/ws/{topic}', '/api/v2/quote/stream']);
    // A WebSocket is both ways: the server's messages are sent, the client's commands received.
    const ops = doc.operations as Record<string, { action: string; messages: { $ref: string }[] }>;
    expect(ops['transactionWs.send'].messages.map((m) => m.$ref)).to.include('#/channels/transactionWs/messages/transaction');
    expect(ops['transactionWs.receive'].messages.map((m) => m.$ref)).to.deep.equal(['#/channels/transactionWs/messages/tx-client-command']);
    expect(ops['klineWs.receive'].action).to.equal('receive');
    expect(doc.components.messages['transaction-batch']).to.deep.include({ payload: { $ref: '#/components/schemas/webhook.tx.transaction-batch' } });
  });

  it('checks client commands against their schemas as the gateways read them', () => {
    const tx = contracts.validator('ws/tx/client-command');
    expect(tx({ id: '1', type: 'subscribe', data: { address: '0xabc', chain_type: 'ethereum' } })).to.equal(true);
    expect(tx({ id: '2', type: 'subscribe', data: { address: '0xabc' } }), 'chain_type is required').to.equal(false);
    expect(tx({ id: '3', type: 'transactionACK', data: { chain_type: 'ethereum', chain_id: 1, txHash: '0x01' } })).to.equal(true);
    const kline = contracts.validator('ws/kline/client-command');
    expect(kline({ id: 'a', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: '0xp', intervals: ['1m'] } })).to.equal(true);
    expect(kline({ id: 'b', type: 'subscribe', data: { chain_type: 'evm', pool_address: '0xp' } }), 'chain_id is required').to.equal(false);
    expect(kline({ type: 'ping' }), 'id is required').to.equal(false);
  });
});
